//go:build race

package service_test

// raceDetector scales work down in tests: strategy code runs several times slower under
// the race detector.
const raceDetector = true
