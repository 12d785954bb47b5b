package clusterdir

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// Lock is the supervisor's hold on a cluster folder. The kernel drops it when
// the process dies, so a crashed supervisor never leaves a stale lock.
type Lock struct{ f *os.File }

// ErrRunning means another process holds the folder's lock: a cluster runs there.
var ErrRunning = errors.New("a cluster is already running in this folder")

// TryLock takes the folder's lock without waiting. It returns ErrRunning when
// the lock is held elsewhere.
func (d Dir) TryLock() (*Lock, error) {
	if err := os.MkdirAll(string(d), 0o755); err != nil {
		return nil, fmt.Errorf("creating cluster folder: %w", err)
	}
	f, err := os.OpenFile(d.LockFile(), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunning
		}
		return nil, fmt.Errorf("locking %s: %w", d.LockFile(), err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error { return l.f.Close() }

// Running reports whether a supervisor holds the folder's lock right now.
func (d Dir) Running() (bool, error) {
	if _, err := os.Stat(d.LockFile()); os.IsNotExist(err) {
		return false, nil
	}
	l, err := d.TryLock()
	if errors.Is(err, ErrRunning) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return false, l.Unlock()
}
