package clusterdir

import (
	"os"
	"strings"
)

// LogTail returns the last n non-empty lines of a log file.
func LogTail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 16 << 10
	info, err := f.Stat()
	if err != nil {
		return ""
	}
	off := info.Size() - window
	if off < 0 {
		off = 0
	}
	buf := make([]byte, info.Size()-off)
	read, _ := f.ReadAt(buf, off)
	buf = buf[:read]
	var lines []string
	for _, l := range strings.Split(string(buf), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, "  "+l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
