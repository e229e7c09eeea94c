package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestGoBuildLogStatus(t *testing.T) {
	cases := []struct {
		name, output, status, messages string
	}{
		{"nothing yet", "", "nothing to compile yet (checking the build cache, or linking)", ""},
		{"downloading", "go: downloading k8s.io/api v0.37.2\ngo: downloading sigs.k8s.io/yaml v1.6.0\n",
			"2 modules downloaded, last sigs.k8s.io/yaml v1.6.0", ""},
		{"compiling after downloads", "go: downloading k8s.io/api v0.37.2\nruntime\nk8s.io/api/core/v1\n",
			"2 packages compiled, last k8s.io/api/core/v1", ""},
		{"a partial line is not counted", "errors\ninternal/byte", "1 package compiled, last errors", ""},
		{"compiler errors are messages", "errors\n# example.com/x\nx.go:3:1: syntax error\n",
			"1 package compiled, last errors", "# example.com/x\nx.go:3:1: syntax error\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l goBuildLog
			// written in odd pieces, as a pipe delivers them
			for i := 0; i < len(c.output); i += 7 {
				_, _ = l.Write([]byte(c.output[i:min(i+7, len(c.output))]))
			}
			if got := l.status(); got != c.status {
				t.Errorf("status = %q, want %q", got, c.status)
			}
			if got := l.messages.String(); got != c.messages {
				t.Errorf("messages = %q, want %q", got, c.messages)
			}
		})
	}
}

// A failing build reports the compiler's message, without the package lines.
func TestGoBuildFailureCarriesMessages(t *testing.T) {
	dir := t.TempDir()
	var w bytes.Buffer
	err := goBuild(context.Background(), &w, "nothing", "./does-not-exist", dir+"/x", "", nil)
	if err == nil || !strings.Contains(err.Error(), "does-not-exist") {
		t.Fatalf("err = %v, want the go command's message naming the package", err)
	}
	if !strings.Contains(w.String(), "imagebuilder: compiling nothing (./does-not-exist)") {
		t.Errorf("no start line in %q", w.String())
	}
}
