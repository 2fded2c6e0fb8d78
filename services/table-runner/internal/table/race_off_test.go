//go:build !race

package table

const raceOn = false
