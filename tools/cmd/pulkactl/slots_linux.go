package main

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// fdWaker wakes at the instant a timerfd expires. The fd is non-blocking,
// so os.File reads it through the runtime's netpoller: the goroutine
// sleeps in epoll like any socket reader and wakes when the kernel timer
// fires, to the microsecond — not at epoll_wait's next whole millisecond
// as a Go timer would.
type fdWaker struct {
	fd int
	f  *os.File
}

// newWaker is a timerfd's waker, or the portable one where the kernel
// refuses a timerfd.
func newWaker() waker {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return newTimerWaker()
	}
	return &fdWaker{fd: fd, f: os.NewFile(uintptr(fd), "slot-timerfd")}
}

func (w *fdWaker) arm(at time.Time) error {
	// Relative, from now: a zero value would disarm the timer instead.
	d := max(time.Until(at), time.Nanosecond)
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(w.fd, 0, &spec, nil); err != nil {
		return fmt.Errorf("slot clock: arm: %w", err)
	}
	return nil
}

func (w *fdWaker) wait() error {
	var expirations [8]byte
	_, err := w.f.Read(expirations[:])
	if errors.Is(err, os.ErrClosed) {
		return errWakerClosed
	}
	return err
}

func (w *fdWaker) close() error { return w.f.Close() }
