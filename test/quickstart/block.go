/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Package quickstart runs the quick start of docs/install.md as written: its shell block is read
// from the page (so the page and the test cannot drift apart) and run with bash, every step
// checked, in the environment a user has. The spec (build tag e2e, run by `make test-e2e`) runs it
// against the local node with only a kubeconfig, a plain kubectl on PATH and a registry the test
// serves on the node's address.
package quickstart

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// The block is the one fenced sh block between these two markers (HTML comments, invisible on
// the rendered page).
const (
	beginMarker = "<!-- quickstart:begin"
	endMarker   = "<!-- quickstart:end -->"
)

var fenced = regexp.MustCompile("(?s)\\A\\s*```sh\\n(.*?)```\\s*\\z")

// ExtractBlock returns the shell block of the quick start in a Markdown page.
func ExtractBlock(markdown string) (string, error) {
	_, rest, ok := strings.Cut(markdown, beginMarker)
	if !ok {
		return "", fmt.Errorf("no %q marker", beginMarker)
	}
	if strings.Contains(rest, beginMarker) {
		return "", fmt.Errorf("more than one %q marker", beginMarker)
	}
	_, rest, ok = strings.Cut(rest, "-->")
	if !ok {
		return "", errors.New("the begin marker is not closed (-->)")
	}
	body, _, ok := strings.Cut(rest, endMarker)
	if !ok {
		return "", fmt.Errorf("no %q marker after the begin marker", endMarker)
	}
	m := fenced.FindStringSubmatch(body)
	if m == nil || strings.Contains(m[1], "```") {
		return "", errors.New("between the markers there must be exactly one ```sh fenced block and nothing else")
	}
	return m[1], nil
}

// RunBlock runs block with bash in dir and env (nothing of this process's environment is
// passed), writing what it prints and each command it runs to out. Any failing command, also in
// a pipe or a command substitution, ends it with an error, as does an unset variable.
func RunBlock(ctx context.Context, block, dir string, env []string, out io.Writer) error {
	f, err := os.CreateTemp("", "quickstart-*.sh")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	script := "set -euo pipefail\nset -x\n" + block
	if _, err := f.WriteString(script); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bash, f.Name())
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the quick start block failed: %w", err)
	}
	return nil
}

// UserEnv is the environment of a user who runs the quick start: the Go toolchain's settings,
// HOME and locale, proxies, PATH = kubectlDir first, then Go's directory, then the system
// directories; plus extra (KUBECONFIG, REGISTRY, ...). Nothing of the test harness (KUBECTL,
// KUSTOMIZE, E2E_*) is passed, so the Makefile's defaults are what a user gets.
func UserEnv(kubectlDir string, extra map[string]string) ([]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("go is not on PATH: %w", err)
	}
	keep := func(k string) bool {
		switch k {
		case "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "TMPDIR", "TERM":
			return true
		}
		return strings.HasPrefix(k, "GO") || strings.HasSuffix(strings.ToUpper(k), "_PROXY")
	}
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); keep(k) {
			env = append(env, kv)
		}
	}
	path := strings.Join([]string{kubectlDir, filepath.Dir(goBin),
		"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}, string(os.PathListSeparator))
	env = append(env, "PATH="+path)
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env, nil
}
