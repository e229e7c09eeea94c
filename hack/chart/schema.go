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
	s := object(map[string]*schema{
		"global": {Type: typeObject, Description: "Helm's values shared with subcharts (unused)."},
		keyImage: object(map[string]*schema{
			"repository": str("The operator image (manager and node daemon), without tag.", 1),
			"tag":        str("The image tag; empty: v<appVersion>.", 0),
			"digest": {Type: typeString, Pattern: "^(sha256:[a-f0-9]{64})?$",
				Description: "The image digest (sha256:...); pins the image and wins over the tag (with both: repository:tag@digest)."},
			"pullPolicy": {Type: typeString, Enum: []string{"Always", "IfNotPresent", "Never"},
				Description: "imagePullPolicy of the manager (the daemon's: manager.flags.daemon-image-pull-policy)."},
		}),
		"imagePullSecrets": {Type: typeArray, Description: "Secrets of both ServiceAccounts (manager and daemon) to pull the image with.",
			Items: object(map[string]*schema{"name": str("A Secret in the release's namespace.", 1)}, "name")},
		"crds": object(map[string]*schema{
			"install": boolean("Install and upgrade the CRDs with the chart."),
			"keep":    boolean("Keep the CRDs (and so every policy and request) when the release is uninstalled."),
		}),
		"manager": object(map[string]*schema{
			"replicas": {Type: "integer", Minimum: new(1),
				Description: "Manager replicas: all serve the webhooks, the elected leader runs the controllers."},
			"size": {Type: typeString, Enum: sizes,
				Description: "Resources preset by enrolled pods in the cluster (manager.sizes, docs/install.md#sizing)."},
			"sizes": object(map[string]*schema{
				"small": resources(), "medium": resources(), "large": resources(), "xlarge": resources(),
			}),
			keyResources:                describe(resources(), "Requests and limits of the manager container; when set, they win over manager.size."),
			"flags":                     flagsSchema(managerFlags, "Flags of the manager (docs/reference.md#manager-flags): passed as --name=value; null leaves a flag out."),
			keyEnv:                      {Type: typeArray, Items: &schema{Type: typeObject}, Description: "Extra environment of the manager container."},
			"podAnnotations":            stringMap("Annotations of the manager's pods."),
			"podLabels":                 stringMap("Labels of the manager's pods, besides its selector's."),
			"nodeSelector":              stringMap("nodeSelector of the manager's pods."),
			"affinity":                  {Type: typeObject, Description: "affinity of the manager's pods."},
			"tolerations":               {Type: typeArray, Description: "tolerations of the manager's pods."},
			"topologySpreadConstraints": {Type: typeArray, Description: "topologySpreadConstraints of the manager's pods."},
			"priorityClassName":         str("priorityClassName of the manager's pods.", 0),
		}),
		"daemon": object(map[string]*schema{
			"flags": flagsSchema(daemonFlags, "Flags of every node daemon (docs/reference.md#daemon-flags), passed by the manager (--daemon-arg=--name=value); null leaves a flag out."),
			keyResources: {Type: typeObject, AdditionalProperties: false,
				Description: "Requests and limits of the daemon container (--daemon-requests, --daemon-limits); a key left out keeps the manager's default, {} means none.",
				Properties:  map[string]*schema{"requests": daemonQuantities(), "limits": daemonQuantities()}},
			"criticalPodsQuota": boolean("A ResourceQuota scoped to the PriorityClass system-node-critical in the release's namespace, which GKE requires to admit the daemon's pods outside kube-system; it limits nothing."),
		}),
		"networkPolicy": object(map[string]*schema{
			"enabled": boolean("NetworkPolicies that admit only the webhook port and, from namespaces labelled metrics: enabled, the metrics port."),
		}),
	})
	s.Schema = "https://json-schema.org/draft-07/schema#"
	s.Title = "Values of the enhanced-liveness-operator chart"
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

func flagsSchema(flags map[string]flagusage.Flag, description string) *schema {
	props := map[string]*schema{}
	for name, f := range flags {
		typ := typeString
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
		props[name] = &schema{Type: []string{typ, "null"}, Description: d}
	}
	return &schema{Type: typeObject, AdditionalProperties: false, Description: description, Properties: props}
}

// schema is a node of a JSON Schema (draft-07), with the keywords values.schema.json uses. The
// fields are in the order of their names, as encoding/json writes a map's keys.
type schema struct {
	Schema string `json:"$schema,omitempty"`
	// AdditionalProperties is false, or the schema of every other property.
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	Description          string             `json:"description,omitempty"`
	Enum                 []string           `json:"enum,omitempty"`
	Items                *schema            `json:"items,omitempty"`
	MinLength            int                `json:"minLength,omitempty"`
	Minimum              *int               `json:"minimum,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Properties           map[string]*schema `json:"properties,omitempty"`
	PropertyNames        *schema            `json:"propertyNames,omitempty"`
	Required             []string           `json:"required,omitempty"`
	Title                string             `json:"title,omitempty"`
	// Type is a type name, or a list of them.
	Type any `json:"type,omitempty"`
}

// The JSON Schema types named more than once.
const (
	typeObject = "object"
	typeString = "string"
	typeArray  = "array"
)

func object(props map[string]*schema, required ...string) *schema {
	return &schema{Type: typeObject, AdditionalProperties: false, Properties: props, Required: required}
}

func str(description string, minLength int) *schema {
	return &schema{Type: typeString, Description: description, MinLength: minLength}
}

func describe(s *schema, description string) *schema {
	s.Description = description
	return s
}

func boolean(description string) *schema {
	return &schema{Type: "boolean", Description: description}
}

func stringMap(description string) *schema {
	return &schema{Type: typeObject, AdditionalProperties: &schema{Type: typeString}, Description: description}
}

func quantities() *schema {
	return &schema{Type: typeObject, AdditionalProperties: &schema{Type: []string{typeString, "number"}}}
}

// daemonQuantities are the resources --daemon-requests and --daemon-limits accept.
func daemonQuantities() *schema {
	q := quantities()
	q.PropertyNames = &schema{Enum: []string{"cpu", "memory", "ephemeral-storage"}}
	return q
}

func resources() *schema {
	requests, limits := quantities(), quantities()
	requests.Description, limits.Description = "Resource requests, name: quantity.", "Resource limits, name: quantity."
	return &schema{Type: typeObject, AdditionalProperties: false,
		Properties: map[string]*schema{"requests": requests, "limits": limits}}
}
