package suites_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	buildErr  error
	binPath   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}
