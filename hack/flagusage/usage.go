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

// Package flagusage reads a binary's flag set from what Go's flag package prints for -help
// (PrintDefaults): the docs tests check docs/reference.md against it, and hack/chart generates
// the Helm chart's values schema from it, so both follow the binaries' real flags.
package flagusage

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// Flag is one command-line flag as the flag package prints it.
type Flag struct {
	Name string
	// Type is the type name the flag package prints: "" for a bool, else int, duration, string,
	// value, ...
	Type string
	// Default is the default as printed; the flag package prints none for a zero value.
	Default string
	// Usage is the flag's description.
	Usage string
}

// DefaultOrZero is the default a person reads: the printed one, else the zero value of its type.
func (f Flag) DefaultOrZero() string {
	if f.Default != "" {
		return f.Default
	}
	switch f.Type {
	case "":
		return "false"
	case "int", "uint", "float", "int64", "uint64":
		return "0"
	case "duration":
		return "0s"
	}
	return `""`
}

// Of runs the binary at path with args (a subcommand) and -help, in an environment of PATH and
// HOME only (defaults taken from variables such as $POD_NAMESPACE are then the built-in ones), and
// parses its flags.
func Of(path, home string, args ...string) (map[string]Flag, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(path, append(args, "-help")...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -help: %v\n%s", path, err, stderr.String())
	}
	flags, err := Parse(stderr.String())
	if err != nil {
		return nil, fmt.Errorf("%s -help: %w", path, err)
	}
	return flags, nil
}

var (
	// "  -name type" or "  -name" (bool), then the usage indented by a tab; one-letter names
	// share the line with the usage.
	usageFlag    = regexp.MustCompile(`^  -([A-Za-z0-9][-A-Za-z0-9_.]*)(?:[ \t]+(\S+))?(?:\t(.*))?$`)
	usageLine    = "    \t"
	usageDefault = regexp.MustCompile(`^(.*?)\s*\(default (.*)\)$`)
)

// Parse reads the flag package's PrintDefaults output.
func Parse(usage string) (map[string]Flag, error) {
	flags := map[string]Flag{}
	var cur *Flag
	var text []string
	flush := func() {
		if cur == nil {
			return
		}
		u := strings.Join(text, " ")
		if m := usageDefault.FindStringSubmatch(u); m != nil {
			u, cur.Default = m[1], m[2]
		}
		cur.Usage = u
		flags[cur.Name] = *cur
	}
	for line := range strings.SplitSeq(usage, "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			flush()
			cur = &Flag{Name: m[1], Type: m[2]}
			text = nil
			if m[3] != "" {
				text = append(text, strings.TrimSpace(m[3]))
			}
			continue
		}
		if cur != nil && strings.HasPrefix(line, usageLine) {
			text = append(text, strings.TrimSpace(line))
		}
	}
	flush()
	if len(flags) == 0 {
		return nil, fmt.Errorf("no flag found in the usage:\n%s", usage)
	}
	return flags, nil
}
