package controlplane

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kscale/kscale/controlplane/clusterdir"
)

// process is one running component child.
type process struct {
	name    string
	cmd     *exec.Cmd
	started time.Time
	// exited is closed once the process has been reaped; err is its exit
	// status, valid after that.
	exited chan struct{}
	err    error
}

// startComponent launches argv, the command line of component name, with
// output appended to the component's log file.
func startComponent(dir clusterdir.Dir, name string, argv []string) (*process, error) {
	logFile, err := os.OpenFile(dir.LogFile(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening log of %s: %w", name, err)
	}
	defer logFile.Close() // the child holds its own descriptor
	fmt.Fprintf(logFile, "\n==== %s starting %s: %s\n", time.Now().Format(time.RFC3339), name, strings.Join(argv, " "))

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir.ComponentDir(name)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		// Own process group: a Ctrl-C on the supervisor's terminal reaches
		// the supervisor alone, which then stops the children in order.
		Setpgid: true,
		// If the supervisor dies without stopping its children, the kernel
		// stops them: no orphaned apiserver holding ports.
		Pdeathsig: syscall.SIGTERM,
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, started: time.Now(), exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// stop sends SIGTERM and, after grace, SIGKILL; it returns once the process
// has been reaped.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// exitError describes how the process ended, with the tail of its log.
func (p *process) exitError(dir clusterdir.Dir) error {
	status := "exited"
	if p.err != nil {
		status = p.err.Error()
	}
	tail := clusterdir.LogTail(dir.LogFile(p.name), 5)
	if tail == "" {
		return fmt.Errorf("%s %s", p.name, status)
	}
	return fmt.Errorf("%s %s; last log lines (%s):\n%s", p.name, status, dir.LogFile(p.name), tail)
}
