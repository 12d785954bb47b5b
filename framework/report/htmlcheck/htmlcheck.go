// Package htmlcheck loads a report page in headless Chromium the way a
// person's browser would, for the tests of the report and of the suites:
// console errors, the DOM as parsed, and a screenshot.
package htmlcheck

import (
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// The window a report is rendered in, and the least a drawn page shows.
const (
	ShotWidth, ShotHeight = 1280, 4000
	MinPlots              = 5
	minColours            = 16
)

// Chromium finds headless Chromium. A missing browser is an error, not a
// reason to skip: the page is the report users read.
func Chromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errors.New("neither chromium nor chromium-browser is in PATH: the report check renders report.html in headless Chromium; " +
		"make deps installs it (apt-get install chromium)")
}

// consoleLine matches what Chromium logs to stderr (--enable-logging=stderr)
// for a console message: an uncaught error, console.error, or a load the
// page's content security policy refused. The dbus and GPU noise of a
// headless container is on other lines.
var consoleLine = regexp.MustCompile(`:CONSOLE[:(]|Uncaught `)

// Load runs one headless Chromium on a file and returns its stdout and the
// console lines of its stderr. scratch is a folder for its profile.
func Load(bin, page, scratch string, args ...string) (stdout string, console []string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	base := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--no-first-run", "--no-default-browser-check", "--disable-extensions",
		"--user-data-dir=" + filepath.Join(scratch, "profile"),
		"--enable-logging=stderr", "--v=0",
	}
	cmd := exec.CommandContext(ctx, bin, append(append(base, args...), "file://"+page)...)
	cmd.Env = append(os.Environ(), "HOME="+scratch, "XDG_CONFIG_HOME="+scratch, "XDG_CACHE_HOME="+scratch)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return "", nil, fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, errOut.String())
	}
	for _, line := range strings.Split(errOut.String(), "\n") {
		if consoleLine.MatchString(line) {
			console = append(console, line)
		}
	}
	return out.String(), console, nil
}

// CheckDOM looks at the page as Chromium parsed it: the verdict table with
// a row per measurement, and the plots, which an unbalanced tag in the
// SVG would swallow.
func CheckDOM(dom string, measurements int) error {
	start := regexp.MustCompile(`<table[^>]*\bid="verdicts"`).FindStringIndex(dom)
	if start == nil {
		return fmt.Errorf("no table#verdicts in the DOM:\n%.2000s", dom)
	}
	table := dom[start[0]:]
	table = table[:strings.Index(table, "</table>")]
	var errs []error
	if rows := strings.Count(table, "<tr"); rows != measurements+1 {
		errs = append(errs, fmt.Errorf("table#verdicts has %d rows, want a header and %d measurements", rows, measurements))
	}
	if n := len(regexp.MustCompile(`<svg[^>]*\bclass="plot"`).FindAllString(dom, -1)); n < MinPlots {
		errs = append(errs, fmt.Errorf("%d svg.plot elements in the DOM, want at least %d", n, MinPlots))
	}
	if n := strings.Count(dom, "<polyline"); n < MinPlots {
		errs = append(errs, fmt.Errorf("%d polylines in the DOM, want at least %d", n, MinPlots))
	}
	return errors.Join(errs...)
}

// Badge colours of the run's verdict, as the page draws them.
var (
	RedBadge   = [3]uint32{0xcf, 0x22, 0x2e}
	GreenBadge = [3]uint32{0x1a, 0x7f, 0x37}
)

// CheckScreenshot asserts the PNG is the window's size and that something
// was drawn: many colours (text, plot lines), and the verdict badge's
// colour near the top.
func CheckScreenshot(path string, badge [3]uint32) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("no screenshot: %w", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	b := img.Bounds()
	if b.Dx() != ShotWidth || b.Dy() != ShotHeight {
		return fmt.Errorf("screenshot is %dx%d, want %dx%d", b.Dx(), b.Dy(), ShotWidth, ShotHeight)
	}
	colours := map[[3]uint32]bool{}
	sawBadge := false
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			c := [3]uint32{r >> 8, g >> 8, bl >> 8}
			colours[c] = true
			if y < 300 && near(c, badge) {
				sawBadge = true
			}
		}
	}
	var errs []error
	if len(colours) < minColours {
		errs = append(errs, fmt.Errorf("the screenshot has %d colours: nothing was drawn", len(colours)))
	}
	if !sawBadge {
		errs = append(errs, fmt.Errorf("no verdict badge of colour %x in the top 300 pixels of %s", badge, path))
	}
	return errors.Join(errs...)
}

func near(a, b [3]uint32) bool {
	for i := range a {
		d := int(a[i]) - int(b[i])
		if d < -8 || d > 8 {
			return false
		}
	}
	return true
}

// Report checks a rendered report page end to end: no console message,
// the DOM, and a screenshot (kept at shot).
func Report(page string, measurements int, badge [3]uint32, shot string) error {
	bin, err := Chromium()
	if err != nil {
		return err
	}
	scratch, err := os.MkdirTemp("", "kscale-chromium-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	dom, console, err := Load(bin, page, scratch, "--dump-dom")
	if err != nil {
		return err
	}
	if len(console) > 0 {
		return fmt.Errorf("console messages while loading %s:\n%s", page, strings.Join(console, "\n"))
	}
	if err := CheckDOM(dom, measurements); err != nil {
		return err
	}
	_, console, err = Load(bin, page, scratch, "--screenshot="+shot, fmt.Sprintf("--window-size=%d,%d", ShotWidth, ShotHeight))
	if err != nil {
		return err
	}
	if len(console) > 0 {
		return fmt.Errorf("console messages while taking the screenshot:\n%s", strings.Join(console, "\n"))
	}
	return CheckScreenshot(shot, badge)
}
