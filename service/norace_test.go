//go:build !race

package service_test

const raceDetector = false
