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

package docs

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// flag is one command-line flag of a binary as its flag set prints it.
type flag struct {
	name, typ string
	// def is the default as printed; the flag package prints none for a zero value.
	def string
}

// defaultOrZero is the default a person reads: the printed one, else the zero value of its type.
func (f flag) defaultOrZero() string {
	if f.def != "" {
		return f.def
	}
	switch f.typ {
	case "":
		return "false"
	case "int", "uint", "float", "int64", "uint64":
		return "0"
	case "duration":
		return "0s"
	}
	return `""`
}

// binaryFlags builds each binary and reads its flag set from its -help output, run with an
// empty environment so that defaults taken from variables ($POD_NAMESPACE, …) are the built-in
// ones.
func binaryFlags(root, dir string) (map[string]flag, error) {
	for bin, pkg := range mainPackages {
		out := filepath.Join(dir, bin)
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Dir = root
		if b, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	all := map[string]flag{}
	for _, bin := range []string{manager, daemon} {
		var stderr bytes.Buffer
		cmd := exec.Command(filepath.Join(dir, bin), "-help")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s -help: %v\n%s", bin, err, stderr.String())
		}
		flags, err := parseUsage(stderr.String())
		if err != nil {
			return nil, fmt.Errorf("%s -help: %w", bin, err)
		}
		for name, f := range flags {
			all[bin+" --"+name] = f
		}
	}
	return all, nil
}

var (
	// "  -name type" or "  -name" (bool), then the usage indented by a tab; one-letter names
	// share the line with the usage.
	usageFlag    = regexp.MustCompile(`^  -([A-Za-z0-9][-A-Za-z0-9_.]*)(?:[ \t]+(\S+))?`)
	usageDefault = regexp.MustCompile(`.*\(default (.*)\)$`)
)

// parseUsage reads the flag package's PrintDefaults output.
func parseUsage(usage string) (map[string]flag, error) {
	flags := map[string]flag{}
	var cur *flag
	for line := range strings.SplitSeq(usage, "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			f := flag{name: m[1], typ: m[2]}
			flags[f.name] = f
			cur = &f
			continue
		}
		if cur == nil || !strings.HasPrefix(line, "    \t") {
			continue
		}
		if m := usageDefault.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			cur.def = m[1]
			flags[cur.name] = *cur
		}
	}
	if len(flags) == 0 {
		return nil, fmt.Errorf("no flag found in the usage:\n%s", usage)
	}
	return flags, nil
}
