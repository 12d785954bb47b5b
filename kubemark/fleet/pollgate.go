package fleet

import "errors"

// errIdle: a watch at an event boundary has no bytes to read yet.
var errIdle = errors.New("watch idle")

// pollGate sits between a watch's readers and its response body. Armed, a
// read that would wait returns errIdle instead, so the goroutine reading a
// watch can go once an event is done and nothing follows. It holds only at
// boundaries where no reader keeps state: never inside a gzip member, whose
// inflater cannot resume after an error.
type pollGate struct {
	body    pollable
	members *memberReader // the gzip members read through the gate, if any
	armed   bool
}

func (g *pollGate) idle() bool {
	return g.armed && (g.members == nil || !g.members.inMember()) && !g.body.Ready()
}

func (g *pollGate) Read(p []byte) (int, error) {
	if g.idle() {
		return 0, errIdle
	}
	return g.body.Read(p)
}

func (g *pollGate) ReadByte() (byte, error) {
	if g.idle() {
		return 0, errIdle
	}
	return g.body.ReadByte()
}
