package tuningset

import (
	"math/rand/v2"
	"sync"
)

// lockedSource lets phases running in parallel draw from one seeded source
// without a data race; rand.Source implementations are not safe for
// concurrent use.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (l *lockedSource) Uint64() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.src.Uint64()
}
