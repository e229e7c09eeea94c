// Package v1 is the registration-only stand-in for the Ansible plugin of the operator-sdk CLI
// (see the module's doc.go).
package v1

import (
	"sigs.k8s.io/kubebuilder/v4/pkg/config"
	cfgv3 "sigs.k8s.io/kubebuilder/v4/pkg/config/v3"
	"sigs.k8s.io/kubebuilder/v4/pkg/plugin"
)

// Plugin has the name, version and project versions of the real Ansible plugin and implements
// none of the subcommand interfaces.
type Plugin struct{}

var _ plugin.Plugin = Plugin{}

// Name is the plugin's name as the operator-sdk CLI knows it.
func (Plugin) Name() string { return "base.ansible.sdk.operatorframework.io" }

// Version is the plugin's version (v1).
func (Plugin) Version() plugin.Version { return plugin.Version{Number: 1} }

// SupportedProjectVersions are the PROJECT file versions the plugin accepts.
func (Plugin) SupportedProjectVersions() []config.Version { return []config.Version{cfgv3.Version} }
