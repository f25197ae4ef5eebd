package retention

// Scheduled is one prune of Schedule, for the tests.
var Scheduled = (*Service).scheduled
