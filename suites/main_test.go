package suites_test

import (
	"os"
	"sync"
	"testing"
)

// The suites' test binaries, built once into binDir.
var (
	buildMu sync.Mutex
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}
