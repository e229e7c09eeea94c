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
	"fmt"
	"os/exec"
	"path/filepath"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/flagusage"
)

// binaryFlags builds each binary and reads its flag set from its -help output (hack/flagusage),
// run with an empty environment so that defaults taken from variables ($POD_NAMESPACE, …) are the
// built-in ones. Keys are "<binary> --<flag>", and "manager stop --<flag>" for the subcommand.
func binaryFlags(root, dir string) (map[string]flagusage.Flag, error) {
	for bin, pkg := range mainPackages {
		out := filepath.Join(dir, bin)
		build := exec.Command("go", "build", "-o", out, pkg)
		build.Dir = root
		if b, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	all := map[string]flagusage.Flag{}
	for _, bin := range []string{manager, daemon} {
		flags, err := flagusage.Of(filepath.Join(dir, bin), dir)
		if err != nil {
			return nil, err
		}
		for name, f := range flags {
			all[bin+" --"+name] = f
		}
	}
	stop, err := flagusage.Of(filepath.Join(dir, manager), dir, managerStop)
	if err != nil {
		return nil, err
	}
	for name, f := range stop {
		all[manager+" "+managerStop+" --"+name] = f
	}
	return all, nil
}
