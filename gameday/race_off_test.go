//go:build !race

package gameday_test

const raceDetector = false
