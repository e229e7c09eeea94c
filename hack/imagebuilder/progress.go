package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"time"
)

// progressInterval is how often a running compile reports; the first `make demo` on a 2-core
// machine spends many minutes compiling the manager, and it must not look hung.
var progressInterval = 20 * time.Second

// goBuildLog reads the combined output of `go build -v`: a bare import path per compiled package,
// "go: downloading <module> <version>" while modules are fetched, anything else is a message
// (a compiler error, a warning) kept for the failure report.
type goBuildLog struct {
	mu         sync.Mutex
	partial    []byte
	packages   int
	downloads  int
	last       string // the last package or module seen: what the build is busy with
	messages   bytes.Buffer
	lastIsDown bool
}

var importPath = regexp.MustCompile(`^[A-Za-z0-9._~/+-]+$`)

func (l *goBuildLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.partial = append(l.partial, p...)
	for {
		i := bytes.IndexByte(l.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		l.line(string(l.partial[:i]))
		l.partial = l.partial[i+1:]
	}
}

func (l *goBuildLog) line(s string) {
	switch {
	case strings.HasPrefix(s, "go: downloading "):
		l.downloads++
		l.last, l.lastIsDown = strings.TrimPrefix(s, "go: downloading "), true
	case importPath.MatchString(s):
		l.packages++
		l.last, l.lastIsDown = s, false
	default:
		l.messages.WriteString(s + "\n")
	}
}

// status says what the build is doing, e.g. "312 packages compiled, now k8s.io/client-go/rest".
func (l *goBuildLog) status() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.lastIsDown:
		return fmt.Sprintf("%s downloaded, last %s", plural(l.downloads, "module"), l.last)
	case l.packages > 0:
		return fmt.Sprintf("%s compiled, last %s", plural(l.packages, "package"), l.last)
	default:
		return "nothing to compile yet (checking the build cache, or linking)"
	}
}

// goBuild compiles pkg into out with the linker flags ldflags (besides -s -w), reporting on w
// every progressInterval which binary it is compiling, for how long and how far it got.
func goBuild(ctx context.Context, w io.Writer, what, pkg, out, ldflags string, env []string) error {
	var log goBuildLog
	cmd := exec.CommandContext(ctx, "go", "build", "-v", "-trimpath", "-ldflags", "-s -w "+ldflags, "-o", out, pkg)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = &log, &log
	start := time.Now()
	_, _ = fmt.Fprintf(w, "imagebuilder: compiling %s (%s)\n", what, pkg)
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("go build %s: %w\n%s", pkg, err, log.messages.String())
			}
			if log.packages > 0 {
				_, _ = fmt.Fprintf(w, "imagebuilder: compiled %s in %s (%s)\n", what, since(start), plural(log.packages, "package"))
			}
			return nil
		case <-tick.C:
			_, _ = fmt.Fprintf(w, "imagebuilder: compiling %s: %s, %s\n", what, since(start), log.status())
		}
	}
}

func since(t time.Time) string { return time.Since(t).Round(time.Second).String() }

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
