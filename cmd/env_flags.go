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

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// envPrefix starts the environment variable of every manager flag: ELO_DAEMON_ARG is
// --daemon-arg. OLM's Subscription can set a manager's environment (spec.config.env) but not its
// arguments, and a setting made there survives upgrades, which an edit of the CSV does not.
const envPrefix = "ELO_"

// versionFlag prints the version and exits: the one flag that has no environment variable.
const versionFlag = "version"

// envName is the environment variable of a flag: ELO_ and the name in capitals, '-' as '_'.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// flagsFromEnv sets each flag of fs that the command line did not set from its environment
// variable in environ (KEY=value entries): the command line wins over the environment, the
// environment over the defaults. A repeatable flag takes a whitespace-separated list. An ELO_
// variable that names no flag, or a value the flag refuses, is an error naming the variable.
func flagsFromEnv(fs *flag.FlagSet, environ []string) error {
	onCommandLine := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { onCommandLine[f.Name] = true })
	byEnv := map[string]*flag.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != versionFlag { // a command, not a setting
			byEnv[envName(f.Name)] = f
		}
	})

	var errs []error
	for _, kv := range slices.Sorted(slices.Values(environ)) {
		key, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(key, envPrefix) {
			continue
		}
		f, ok := byEnv[key]
		if !ok {
			errs = append(errs, fmt.Errorf("%s: no manager flag is called that (ELO_<FLAG>: e.g. %s for --daemon-arg)",
				key, envName("daemon-arg")))
			continue
		}
		if onCommandLine[f.Name] {
			continue
		}
		values := []string{value}
		if _, list := f.Value.(*stringList); list {
			values = strings.Fields(value)
		}
		for _, v := range values {
			if err := fs.Set(f.Name, v); err != nil {
				errs = append(errs, fmt.Errorf("%s=%q (--%s): %w", key, value, f.Name, err))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// mustFlagsFromEnv applies the environment to the parsed command line (flagsFromEnv), or exits
// naming the variable that is wrong, as a bad flag does.
func mustFlagsFromEnv(fs *flag.FlagSet) {
	if err := flagsFromEnv(fs, os.Environ()); err != nil {
		fmt.Fprintln(os.Stderr, "invalid environment:", err)
		os.Exit(2)
	}
}
