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
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
)

// check renders the chart with its default values into the install namespace and compares it,
// its hooks aside, with `kustomize build config/default`, object by object.
func check(kustomize, helm string) error {
	want, err := kustomizeBuild(kustomize, defaultConfig)
	if err != nil {
		return err
	}
	// The hooks are the chart's own (the uninstall's `manager stop`), not config/default's.
	out, err := run(helm, "template", releaseName, chartDir, "--namespace", installNamespace, "--no-hooks")
	if err != nil {
		return err
	}
	got, err := parseObjects(out)
	if err != nil {
		return fmt.Errorf("helm template: %w", err)
	}
	if problems := compare(want, got); len(problems) > 0 {
		return fmt.Errorf("the chart rendered with its default values (helm template) is not %s (kustomize build):\n%s\n"+
			"Run make chart; a difference left is a value whose default differs from config/default "+
			"(charts/enhanced-liveness-operator/values.yaml)", defaultConfig, strings.Join(problems, "\n"))
	}
	fmt.Printf("chart: %s with its default values is %s, %d objects (the Namespace excepted)\n", chartDir, defaultConfig, len(got))
	return nil
}

// compare lists the differences between the kustomize objects and the chart's, both normalized.
func compare(kustomize, chart []map[string]any) []string {
	want, errW := index(kustomize, true)
	got, errG := index(chart, false)
	if err := errors.Join(errW, errG); err != nil {
		return []string{err.Error()}
	}
	var problems []string
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			problems = append(problems, "missing from the chart: "+k)
			continue
		}
		if d := cmp.Diff(want[k], g); d != "" {
			problems = append(problems, fmt.Sprintf("%s differs (-kustomize +chart):\n%s", k, d))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			problems = append(problems, "only in the chart: "+k)
		}
	}
	return problems
}

// index normalizes objects and keys them by kind, namespace and name.
func index(objs []map[string]any, fromKustomize bool) (map[string]map[string]any, error) {
	m := map[string]map[string]any{}
	for _, o := range objs {
		if fromKustomize && kindOf(o) == "Namespace" {
			continue // the chart installs into a namespace that exists
		}
		normalize(o)
		meta, _ := o["metadata"].(map[string]any)
		ns, _ := meta["namespace"].(string)
		k := fmt.Sprintf("%v %s %s/%s", o["apiVersion"], kindOf(o), ns, nameOf(o))
		if _, dup := m[k]; dup {
			return nil, fmt.Errorf("%s appears twice", k)
		}
		m[k] = o
	}
	return m, nil
}

// Labels and annotations that say who installed an object, not what it is.
var (
	installerLabels      = []string{"app.kubernetes.io/managed-by", "helm.sh/chart", "app.kubernetes.io/instance", "app.kubernetes.io/version"}
	installerAnnotations = []string{"helm.sh/resource-policy"}
)

// normalize removes from an object what differs between the install paths by design: the
// labels and annotations of the installer, and the manager's image (config/default has a
// placeholder that `make deploy` sets; the chart's is the release's); and puts the manager's
// arguments in a canonical form (--flag is --flag=true, sorted by flag name, a repeated flag's
// values kept in order).
func normalize(o map[string]any) {
	meta, _ := o["metadata"].(map[string]any)
	for key, drop := range map[string][]string{"labels": installerLabels, "annotations": installerAnnotations} {
		m, _ := meta[key].(map[string]any)
		for _, k := range drop {
			delete(m, k)
		}
		if m != nil && len(m) == 0 {
			delete(meta, key)
		}
	}
	if kindOf(o) != "Deployment" || nameOf(o) != managerDeployment {
		return
	}
	spec, _ := o["spec"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	pod, _ := tmpl["spec"].(map[string]any)
	containers, _ := pod["containers"].([]any)
	for _, x := range containers {
		c, _ := x.(map[string]any)
		if c["name"] != managerContainer {
			continue
		}
		c[keyImage] = "<the release's image>"
		if args, ok := c["args"].([]any); ok {
			c["args"] = canonicalArgs(args)
		}
	}
}

// canonicalArgs writes each --flag as --flag=true and sorts by flag name, stably.
func canonicalArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		s, _ := a.(string)
		if strings.HasPrefix(s, "-") && !strings.Contains(s, "=") {
			s += "=true"
		}
		out[i] = "--" + strings.TrimLeft(s, "-")
	}
	slices.SortStableFunc(out, func(a, b any) int {
		na, _, _ := strings.Cut(a.(string), "=")
		nb, _, _ := strings.Cut(b.(string), "=")
		return strings.Compare(na, nb)
	})
	return out
}
