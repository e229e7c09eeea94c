// Package ansibleoperatorplugins stands in for github.com/operator-framework/ansible-operator-plugins,
// which the Go module proxy reachable here refuses. The operator-sdk CLI imports it only to
// register the Ansible plugin type (`ansiblev1.Plugin{}` in its cli package). This module keeps
// that type with its real name, version and project version, and none of the Ansible
// scaffolding: `operator-sdk init --plugins ansible` and friends report that the plugin does not
// support the subcommand. The commands `make test-olm` uses (run bundle, run bundle-upgrade,
// scorecard, cleanup) do not involve plugins.
package ansibleoperatorplugins
