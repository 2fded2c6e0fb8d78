//go:build !linux

package main

// newWaker is the portable waker where there is no timerfd.
func newWaker() waker { return newTimerWaker() }
