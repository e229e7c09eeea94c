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
	"flag"
	"os"
	"path/filepath"

	"github.com/enhanced-liveness/enhanced-liveness-operator/hack/flagusage"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/daemonoptions"
)

// chartManagedFlags are the manager flags the chart sets from values of their own: the node
// daemon's flags (daemon.flags, passed as --daemon-arg) and resources (daemon.resources); and
// --version, which prints and exits.
var chartManagedFlags = map[string]string{
	"daemon-arg":      "daemon.flags",
	"daemon-requests": "daemon.resources.requests",
	"daemon-limits":   "daemon.resources.limits",
	"version":         "",
}

// Sizes are the manager's presets (manager.sizes in values.yaml, docs/install.md#sizing).
var sizes = []string{"small", "medium", "large", "xlarge"}

// writeSchema writes values.schema.json: Helm checks the values of every install and upgrade
// against it, so a misspelt flag or key is refused with its name before anything is applied.
// The flags' names, types and descriptions come from the binaries' flag sets.
func writeSchema() error {
	managerFlags, err := managerFlagSet()
	if err != nil {
		return err
	}
	daemonFlags := daemonFlagSet()
	s := object(map[string]any{
		"global": map[string]any{"type": "object", "description": "Helm's values shared with subcharts (unused)."},
		"image": object(map[string]any{
			"repository": str("The operator image (manager and node daemon), without tag.", 1),
			"tag":        str("The image tag; empty: v<appVersion>.", 0),
			"digest": map[string]any{"type": "string", "pattern": "^(sha256:[a-f0-9]{64})?$",
				"description": "The image digest (sha256:...); wins over the tag."},
			"pullPolicy": map[string]any{"type": "string", "enum": []string{"Always", "IfNotPresent", "Never"},
				"description": "imagePullPolicy of the manager (the daemon's: manager.flags.daemon-image-pull-policy)."},
		}),
		"imagePullSecrets": map[string]any{"type": "array", "description": "Secrets of both ServiceAccounts (manager and daemon) to pull the image with.",
			"items": object(map[string]any{"name": str("A Secret in the release's namespace.", 1)}, "name")},
		"crds": object(map[string]any{
			"install": boolean("Install and upgrade the CRDs with the chart."),
			"keep":    boolean("Keep the CRDs (and so every policy and request) when the release is uninstalled."),
		}),
		"manager": object(map[string]any{
			"replicas": map[string]any{"type": "integer", "minimum": 1,
				"description": "Manager replicas: all serve the webhooks, the elected leader runs the controllers."},
			"size": map[string]any{"type": "string", "enum": sizes,
				"description": "Resources preset by enrolled pods in the cluster (manager.sizes, docs/install.md#sizing)."},
			"sizes": object(map[string]any{
				"small": resources(), "medium": resources(), "large": resources(), "xlarge": resources(),
			}),
			"resources":                 resources(),
			"flags":                     flagsSchema(managerFlags, "Flags of the manager (docs/reference.md#manager-flags): passed as --name=value; null leaves a flag out."),
			"env":                       map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "Extra environment of the manager container."},
			"podAnnotations":            stringMap("Annotations of the manager's pods."),
			"podLabels":                 stringMap("Labels of the manager's pods, besides its selector's."),
			"nodeSelector":              stringMap("nodeSelector of the manager's pods."),
			"affinity":                  map[string]any{"type": "object", "description": "affinity of the manager's pods."},
			"tolerations":               map[string]any{"type": "array", "description": "tolerations of the manager's pods."},
			"topologySpreadConstraints": map[string]any{"type": "array", "description": "topologySpreadConstraints of the manager's pods."},
			"priorityClassName":         str("priorityClassName of the manager's pods.", 0),
		}),
		"daemon": object(map[string]any{
			"flags": flagsSchema(daemonFlags, "Flags of every node daemon (docs/reference.md#daemon-flags), passed by the manager (--daemon-arg=--name=value); null leaves a flag out."),
			"resources": map[string]any{"type": "object", "additionalProperties": false,
				"description": "Requests and limits of the daemon container (--daemon-requests, --daemon-limits); a key left out keeps the manager's default, {} means none.",
				"properties":  map[string]any{"requests": daemonQuantities(), "limits": daemonQuantities()}},
		}),
		"networkPolicy": object(map[string]any{
			"enabled": boolean("NetworkPolicies that admit only the webhook port and, from namespaces labelled metrics: enabled, the metrics port."),
		}),
	})
	s["$schema"] = "https://json-schema.org/draft-07/schema#"
	s["title"] = "Values of the enhanced-liveness-operator chart"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(chartDir, "values.schema.json"), append(b, '\n'), 0o644)
}

// managerFlagSet builds the manager and reads its flags from -help.
func managerFlagSet() (map[string]flagusage.Flag, error) {
	dir, err := os.MkdirTemp("", "chart-manager-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	bin := filepath.Join(dir, "manager")
	if _, err := run("go", "build", "-o", bin, "./cmd"); err != nil {
		return nil, err
	}
	flags, err := flagusage.Of(bin, dir)
	if err != nil {
		return nil, err
	}
	for name := range chartManagedFlags {
		delete(flags, name)
	}
	return flags, nil
}

// daemonFlagSet is the daemon's flag set less the flags the manager sets itself.
func daemonFlagSet() map[string]flagusage.Flag {
	fs := flag.NewFlagSet("daemon", flag.ContinueOnError)
	daemonoptions.Bind(fs)
	flags := map[string]flagusage.Flag{}
	fs.VisitAll(func(f *flag.Flag) {
		if _, managed := daemonset.ManagedDaemonFlags[f.Name]; managed {
			return
		}
		typ, usage := flag.UnquoteUsage(f)
		flags[f.Name] = flagusage.Flag{Name: f.Name, Type: typ, Default: f.DefValue, Usage: usage}
	})
	return flags
}

func flagsSchema(flags map[string]flagusage.Flag, description string) map[string]any {
	props := map[string]any{}
	for name, f := range flags {
		typ := "string"
		switch f.Type {
		case "":
			typ = "boolean"
		case "int", "int64", "uint", "uint64":
			typ = "integer"
		case "float", "float64":
			typ = "number"
		}
		d := f.Usage
		if f.Default != "" {
			d += " (default " + f.Default + ")"
		}
		props[name] = map[string]any{"type": []string{typ, "null"}, "description": d}
	}
	return map[string]any{"type": "object", "additionalProperties": false, "description": description, "properties": props}
}

func object(props map[string]any, required ...string) map[string]any {
	o := map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

func str(description string, minLength int) map[string]any {
	s := map[string]any{"type": "string", "description": description}
	if minLength > 0 {
		s["minLength"] = minLength
	}
	return s
}

func boolean(description string) map[string]any {
	return map[string]any{"type": "boolean", "description": description}
}

func stringMap(description string) map[string]any {
	return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}, "description": description}
}

func quantities() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": map[string]any{"type": []string{"string", "number"}}}
}

// daemonQuantities are the resources --daemon-requests and --daemon-limits accept.
func daemonQuantities() map[string]any {
	q := quantities()
	q["propertyNames"] = map[string]any{"enum": []string{"cpu", "memory", "ephemeral-storage"}}
	return q
}

func resources() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"requests": quantities(), "limits": quantities()}}
}
