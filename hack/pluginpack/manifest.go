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

// The krew plugin manifest (krew.googlecontainertools.github.com/v1alpha2, kind Plugin), with the
// fields krew reads: written here rather than imported, it is a handful of fields.

type manifest struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   metadata `json:"metadata"`
	Spec       spec     `json:"spec"`
}

type metadata struct {
	Name string `json:"name"`
}

type spec struct {
	Version          string     `json:"version"`
	Homepage         string     `json:"homepage"`
	ShortDescription string     `json:"shortDescription"`
	Description      string     `json:"description"`
	Platforms        []platform `json:"platforms"`
}

type platform struct {
	Selector selector `json:"selector"`
	URI      string   `json:"uri"`
	SHA256   string   `json:"sha256"`
	Bin      string   `json:"bin"`
	Files    []file   `json:"files"`
}

type selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type file struct {
	From string `json:"from"`
	To   string `json:"to"`
}

func newManifest(version string) manifest {
	return manifest{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2", Kind: "Plugin",
		Metadata: metadata{Name: "enhancedliveness"},
		Spec: spec{
			Version:          version,
			Homepage:         "https://github.com/enhanced-liveness/enhanced-liveness-operator",
			ShortDescription: "Explain why a container was or was not restarted",
			Description: "Explains what enhanced-liveness-operator does with a pod's liveness probes and why: its mode, " +
				"the probe as the node daemon runs it, the last results, the decision with the rule and its numbers, the " +
				"hold and what ends it, what the kubelet did or would have done, and the restart requests. `status` " +
				"summarises what a namespace holds now.",
		},
	}
}
