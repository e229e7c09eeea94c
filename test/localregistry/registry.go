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

// Package localregistry serves an in-memory OCI registry (go-containerregistry's) over plain
// HTTP on the local node's address, and tells the node's containerd about it, the way a node's
// administrator would: the real-node suites that push images as a user does (test/quickstart,
// test/helm) pull from it.
package localregistry

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// Start serves a registry on a free port of addr until stop is called, logging to logw; it
// returns its host:port.
func Start(addr string, logw io.Writer) (host string, stop func(), err error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(log.New(logw, "registry: ", 0))),
		ReadHeaderTimeout: 30 * time.Second,
	}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// TrustPlainHTTP configures host as a plain-HTTP registry for the node's containerd
// (<config_path>/<host:port>/hosts.toml, read at each pull); remove undoes it.
// hack/local-cluster/down.sh removes the whole directory too.
func TrustPlainHTTP(hostsDir, host string) (remove func(), err error) {
	dir := filepath.Join(hostsDir, host)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	toml := fmt.Sprintf("server = \"http://%[1]s\"\n\n"+
		"[host.\"http://%[1]s\"]\n  capabilities = [\"pull\", \"resolve\"]\n", host)
	if err := os.WriteFile(filepath.Join(dir, "hosts.toml"), []byte(toml), 0o644); err != nil {
		return nil, err
	}
	return func() { _ = os.RemoveAll(dir) }, nil
}

// Catalog lists the repositories the registry at host holds.
func Catalog(host string) ([]string, error) {
	resp, err := http.Get("http://" + host + "/v2/_catalog")
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body struct {
		Repositories []string `json:"repositories"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		return nil, err
	}
	return body.Repositories, nil
}
