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
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/flagusage"
)

// These tests render the committed chart with helm: HELM names the binary (make test sets it),
// else bin/helm of the repository (make helm builds it).

const repoRoot = "../.."

func helmBinary(t *testing.T) string {
	t.Helper()
	h := os.Getenv("HELM")
	if h == "" {
		h = filepath.Join(repoRoot, "bin", "helm")
	}
	if _, err := os.Stat(h); err != nil {
		t.Fatalf("no helm binary at %s: run `make helm`, or set HELM", h)
	}
	abs, err := filepath.Abs(h)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// renderChart runs helm template with values (a map written as a values file) and returns the
// manager Deployment's manager container; err is helm's error with its output.
func renderChart(t *testing.T, values map[string]any) (map[string]any, []map[string]any, error) {
	t.Helper()
	b, err := json.Marshal(values)
	if err != nil {
		t.Fatal(err)
	}
	// Not t.TempDir: helm -f splits its argument at commas, which a test's name may hold.
	dir, err := os.MkdirTemp("", "chart-values-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	vf := filepath.Join(dir, "values.json")
	if err := os.WriteFile(vf, b, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(helmBinary(t), "template", "r", filepath.Join(repoRoot, chartDir), "-n", "ops", "-f", vf)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, nil, fmt.Errorf("%v: %s", err, out)
	}
	objs, err := parseObjects(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if kindOf(o) == "Deployment" && nameOf(o) == managerDeployment {
			spec := o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			for _, c := range spec["containers"].([]any) {
				if c.(map[string]any)["name"] == managerContainer {
					return c.(map[string]any), objs, nil
				}
			}
		}
	}
	t.Fatalf("no manager container in the rendered chart")
	return nil, nil, nil
}

func argsOf(c map[string]any) []string {
	var args []string
	for _, a := range c["args"].([]any) {
		args = append(args, a.(string))
	}
	return args
}

// sample is a value of the flag's type for the test: its default when it has one.
func sample(f flagusage.Flag) any {
	switch f.Type {
	case "":
		return true
	case "int", "int64", "uint", "uint64":
		return 7
	case "float", "float64":
		return 2.5
	}
	if d := strings.Trim(f.Default, `"`); d != "" {
		return d
	}
	return "x"
}

func formatted(v any) string { return fmt.Sprint(v) }

// Every manager flag (its flag set, read from the built binary's -help) can be set through
// manager.flags and reaches the manager's arguments as --name=value; the flags the chart sets
// from other values are refused there, with their name.
func TestEveryManagerFlagIsSettable(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", bin, "./cmd")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd: %v\n%s", err, out)
	}
	flags, err := flagusage.Of(bin, dir)
	if err != nil {
		t.Fatal(err)
	}
	set := map[string]any{}
	for name, f := range flags {
		if _, managed := chartManagedFlags[name]; !managed {
			set[name] = sample(f)
		}
	}
	c, _, err := renderChart(t, map[string]any{"manager": map[string]any{"flags": set}})
	if err != nil {
		t.Fatalf("rendering with every manager flag set: %v", err)
	}
	args := argsOf(c)
	for name, v := range set {
		if want := "--" + name + "=" + formatted(v); !slices.Contains(args, want) {
			t.Errorf("manager.flags.%s: %s is not among the manager's arguments %v", name, want, args)
		}
	}
	for name := range chartManagedFlags {
		_, _, err := renderChart(t, map[string]any{"manager": map[string]any{"flags": map[string]any{name: "x"}}})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("manager.flags.%s: want an error naming it, got %v", name, err)
		}
	}
}

// Every daemon flag the manager passes through can be set through daemon.flags; those the
// DaemonSet sets itself are refused with their name.
func TestEveryDaemonFlagIsSettable(t *testing.T) {
	flags := daemonFlagSet()
	if len(flags) < 10 {
		t.Fatalf("the daemon's flag set has %d flags: %v", len(flags), flags)
	}
	set := map[string]any{}
	for name, f := range flags {
		set[name] = sample(f)
	}
	c, _, err := renderChart(t, map[string]any{"daemon": map[string]any{"flags": set}})
	if err != nil {
		t.Fatalf("rendering with every daemon flag set: %v", err)
	}
	args := argsOf(c)
	for name, v := range set {
		if want := "--daemon-arg=--" + name + "=" + formatted(v); !slices.Contains(args, want) {
			t.Errorf("daemon.flags.%s: %s is not among the manager's arguments %v", name, want, args)
		}
	}
	for _, name := range []string{"cri-endpoint", "metrics-bind-address", "node-name"} {
		_, _, err := renderChart(t, map[string]any{"daemon": map[string]any{"flags": map[string]any{name: "x"}}})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("daemon.flags.%s: want an error naming it, got %v", name, err)
		}
	}
}

func TestValues(t *testing.T) {
	resources := func(c map[string]any) string { b, _ := json.Marshal(c["resources"]); return string(b) }
	for _, tc := range []struct {
		name   string
		values map[string]any
		check  func(t *testing.T, c map[string]any, objs []map[string]any)
	}{
		{"default: the small size, the release's image", nil, func(t *testing.T, c map[string]any, _ []map[string]any) {
			if got, want := resources(c), `{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"20m","memory":"96Mi"}}`; got != want {
				t.Errorf("resources = %s, want %s", got, want)
			}
			if got, want := c["image"], "ghcr.io/enhanced-liveness/enhanced-liveness-operator:v"+chartAppVersion(t); got != want {
				t.Errorf("image = %v, want %s", got, want)
			}
		}},
		{"a size", map[string]any{"manager": map[string]any{"size": "large"}}, func(t *testing.T, c map[string]any, _ []map[string]any) {
			if got, want := resources(c), `{"limits":{"cpu":"2","memory":"1Gi"},"requests":{"cpu":"250m","memory":"768Mi"}}`; got != want {
				t.Errorf("resources = %s, want %s", got, want)
			}
		}},
		{"resources win over the size", map[string]any{"manager": map[string]any{"size": "large",
			"resources": map[string]any{"limits": map[string]any{"memory": "3Gi"}}}}, func(t *testing.T, c map[string]any, _ []map[string]any) {
			if got, want := resources(c), `{"limits":{"memory":"3Gi"}}`; got != want {
				t.Errorf("resources = %s, want %s", got, want)
			}
		}},
		{"a digest pins the image, the tag kept for reading", map[string]any{"image": map[string]any{"repository": "r.example/op", "tag": "v9",
			"digest": "sha256:" + strings.Repeat("ab", 32)}}, func(t *testing.T, c map[string]any, _ []map[string]any) {
			if got, want := c["image"], "r.example/op:v9@sha256:"+strings.Repeat("ab", 32); got != want {
				t.Errorf("image = %v, want %s", got, want)
			}
		}},
		{"a digest alone", map[string]any{"image": map[string]any{"repository": "r.example/op",
			"digest": "sha256:" + strings.Repeat("ab", 32)}}, func(t *testing.T, c map[string]any, _ []map[string]any) {
			if got, want := c["image"], "r.example/op@sha256:"+strings.Repeat("ab", 32); got != want {
				t.Errorf("image = %v, want %s", got, want)
			}
		}},
		{"a flag left out with null, large numbers as integers", map[string]any{"manager": map[string]any{"flags": map[string]any{
			"leader-elect": nil, "kube-api-burst": 1000000}}}, func(t *testing.T, c map[string]any, _ []map[string]any) {
			args := argsOf(c)
			if slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--leader-elect") }) {
				t.Errorf("--leader-elect is passed although null: %v", args)
			}
			if !slices.Contains(args, "--kube-api-burst=1000000") {
				t.Errorf("no --kube-api-burst=1000000 in %v", args)
			}
		}},
		{"the daemon's resources", map[string]any{"daemon": map[string]any{"resources": map[string]any{
			"requests": map[string]any{}, "limits": map[string]any{"memory": "512Mi", "cpu": 1}}}},
			func(t *testing.T, c map[string]any, _ []map[string]any) {
				args := argsOf(c)
				for _, want := range []string{"--daemon-requests=", "--daemon-limits=cpu=1,memory=512Mi"} {
					if !slices.Contains(args, want) {
						t.Errorf("no %s in %v", want, args)
					}
				}
			}},
		{"no CRDs", map[string]any{"crds": map[string]any{"install": false}}, func(t *testing.T, _ map[string]any, objs []map[string]any) {
			for _, o := range objs {
				if kindOf(o) == "CustomResourceDefinition" {
					t.Errorf("CRD %s rendered with crds.install=false", nameOf(o))
				}
			}
		}},
		{"CRDs kept by default", nil, func(t *testing.T, _ map[string]any, objs []map[string]any) {
			n := 0
			for _, o := range objs {
				if kindOf(o) == "CustomResourceDefinition" {
					n++
					ann := o["metadata"].(map[string]any)["annotations"].(map[string]any)
					if ann["helm.sh/resource-policy"] != "keep" {
						t.Errorf("CRD %s has no helm.sh/resource-policy: keep", nameOf(o))
					}
				}
			}
			bases, err := filepath.Glob("../../config/crd/bases/*.yaml")
			if err != nil || len(bases) == 0 {
				t.Fatalf("config/crd/bases: %v, %d CRDs", err, len(bases))
			}
			if n != len(bases) {
				t.Errorf("%d CRDs rendered, want the %d of config/crd/bases", n, len(bases))
			}
		}},
		{"one replica: no disruption budget", map[string]any{"manager": map[string]any{"replicas": 1}},
			func(t *testing.T, _ map[string]any, objs []map[string]any) {
				for _, o := range objs {
					if kindOf(o) == "PodDisruptionBudget" {
						t.Errorf("PodDisruptionBudget %s rendered with one replica", nameOf(o))
					}
				}
			}},
		{"the release's namespace everywhere", nil, func(t *testing.T, _ map[string]any, objs []map[string]any) {
			b, _ := json.Marshal(objs)
			if strings.Contains(string(b), installNamespace) {
				t.Errorf("the chart rendered into namespace ops still names %s", installNamespace)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, objs, err := renderChart(t, tc.values)
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, c, objs)
		})
	}
}

// Bad values are refused by helm before anything is applied, naming the value.
func TestBadValuesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		want   string
	}{
		{"a misspelt manager flag", map[string]any{"manager": map[string]any{"flags": map[string]any{"default-max-hlod": "5m"}}}, "default-max-hlod"},
		{"a misspelt daemon flag", map[string]any{"daemon": map[string]any{"flags": map[string]any{"memory-limt": "1Gi"}}}, "memory-limt"},
		{"a flag of the wrong type", map[string]any{"manager": map[string]any{"flags": map[string]any{"decision-workers": "many"}}}, "decision-workers"},
		{"an unknown size", map[string]any{"manager": map[string]any{"size": "huge"}}, "size"},
		{"an unknown key", map[string]any{"manger": map[string]any{}}, "manger"},
		{"a daemon resource the manager refuses", map[string]any{"daemon": map[string]any{"resources": map[string]any{
			"limits": map[string]any{"nvidia.com/gpu": 1}}}}, "nvidia.com/gpu"},
		{"a bad pull policy", map[string]any{"image": map[string]any{"pullPolicy": "Sometimes"}}, "pullPolicy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := renderChart(t, tc.values)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("want an error naming %q, got %v", tc.want, err)
			}
		})
	}
}

func chartAppVersion(t *testing.T) string {
	b, err := os.ReadFile(filepath.Join(repoRoot, chartDir, "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	m := chartVersionLine.FindAllStringSubmatch(string(b), -1)
	for _, l := range m {
		if l[1] == "appVersion" {
			_, v, _ := strings.Cut(l[0], ": ")
			return strings.Trim(v, `"`)
		}
	}
	t.Fatal("no appVersion in Chart.yaml")
	return ""
}

// The uninstall's pre-delete hook runs `manager stop` from the manager's image, in the release's
// namespace, as its own ServiceAccount, made by hooks of a lower weight with the RBAC it needs;
// every hook object goes once the hook succeeded.
func TestStopHook(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	_, objs, err := renderChart(t, map[string]any{"image": map[string]any{"repository": "reg.example/elo", "digest": digest},
		"imagePullSecrets": []any{map[string]any{"name": "pull"}}})
	if err != nil {
		t.Fatal(err)
	}
	hooks := map[string]map[string]any{}
	for _, o := range objs {
		ann, _ := o["metadata"].(map[string]any)["annotations"].(map[string]any)
		if ann["helm.sh/hook"] == nil {
			continue
		}
		if ann["helm.sh/hook"] != "pre-delete" || ann["helm.sh/hook-delete-policy"] != "before-hook-creation,hook-succeeded" {
			t.Errorf("%s %s: hook annotations %v", kindOf(o), nameOf(o), ann)
		}
		if w := ann["helm.sh/hook-weight"]; (kindOf(o) == "Job") != (w == "0") {
			t.Errorf("%s %s: weight %v, want the Job after its ServiceAccount and RBAC", kindOf(o), nameOf(o), w)
		}
		hooks[kindOf(o)] = o
	}
	if got := slices.Sorted(maps.Keys(hooks)); !slices.Equal(got, []string{"ClusterRole", "ClusterRoleBinding", "Job", "Role", "RoleBinding", "ServiceAccount"}) {
		t.Fatalf("hook objects: %v", got)
	}
	pod := hooks["Job"]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
	c := pod["containers"].([]any)[0].(map[string]any)
	if c["image"] != "reg.example/elo@"+digest {
		t.Errorf("the hook's image %v, want the manager's", c["image"])
	}
	if got := fmt.Sprint(c["command"]); got != "[/manager stop --namespace=ops --timeout=2m]" {
		t.Errorf("the hook's command %s", got)
	}
	if pod["serviceAccountName"] != nameOf(hooks["ServiceAccount"]) {
		t.Errorf("the Job runs as %v, not the hook's ServiceAccount %s", pod["serviceAccountName"], nameOf(hooks["ServiceAccount"]))
	}
	if got := fmt.Sprint(hooks["ServiceAccount"]["imagePullSecrets"]); got != "[map[name:pull]]" {
		t.Errorf("the hook's ServiceAccount pulls with %s", got)
	}
	// What manager stop reads and writes (docs/reference.md#manager-stop).
	rules := fmt.Sprint(hooks["Role"]["rules"]) + fmt.Sprint(hooks["ClusterRole"]["rules"])
	for _, want := range []string{"resources:[deployments] verbs:[get patch]", "resources:[pods] verbs:[list]",
		"resources:[nodes] verbs:[list]", "resources:[nodes/status] verbs:[patch]"} {
		if !strings.Contains(rules, want) {
			t.Errorf("the hook's RBAC lacks %q: %s", want, rules)
		}
	}
}
