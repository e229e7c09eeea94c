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

// Command registry serves an OCI registry over HTTPS on a loopback address for `make test-olm`:
// `operator-sdk run bundle` reads the index image's labels and renders the bundle over HTTPS from
// the machine that runs it, and the local node's containerd pulls the catalog, bundle and
// operator images from it. Images are kept in memory (go-containerregistry's pkg/registry) and
// are gone when the process ends.
//
// At start it creates a CA and a serving certificate for the listen address, writes the CA to
// DIR/ca.crt (for SSL_CERT_FILE and containerd's hosts.toml), and serves until SIGTERM or SIGINT.
// With -netns it also serves the same address inside each of those network namespaces: the local
// cluster's further nodes, whose containerd reaches 127.0.0.1 in its own namespace.
//
// usage: registry -addr 127.0.0.1:35000 -dir bin/olm-test/registry [-netns FILE ...]
package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:35000", "listen address (a loopback IP and port)")
	dir := flag.String("dir", "bin/olm-test/registry", "directory for ca.crt")
	verbose := flag.Bool("v", false, "log every request")
	var netns stringsFlag
	flag.Var(&netns, "netns", "a network namespace file to serve -addr in as well (repeated)")
	flag.Parse()
	if err := run(*addr, *dir, *verbose, netns); err != nil {
		fmt.Fprintln(os.Stderr, "registry:", err)
		os.Exit(1)
	}
}

// stringsFlag collects a repeated flag.
type stringsFlag []string

func (s *stringsFlag) String() string     { return fmt.Sprint(*s) }
func (s *stringsFlag) Set(v string) error { *s = append(*s, v); return nil }

func run(addr, dir string, verbose bool, netns []string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-addr %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-addr %q: want a loopback IP address (nothing here is served off the machine)", addr)
	}
	caPEM, cert, err := newCertificates(ip)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	listeners := []net.Listener{ln}
	for _, ns := range netns {
		l, err := listenIn(ns, addr)
		if err != nil {
			return err
		}
		listeners = append(listeners, l)
	}
	// ca.crt appears only once the ports are bound: waiting for the file is waiting for the server.
	caFile := filepath.Join(dir, "ca.crt")
	if err := os.WriteFile(caFile+".tmp", caPEM, 0o644); err != nil {
		return err
	}
	if err := os.Rename(caFile+".tmp", caFile); err != nil {
		return err
	}

	logger := log.New(os.Stderr, "registry: ", log.LstdFlags)
	requests := log.New(io.Discard, "", 0)
	if verbose {
		requests = logger
	}
	srv := &http.Server{
		Handler:           registry.New(registry.Logger(requests)),
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          logger,
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		go func() { errc <- srv.ServeTLS(l, "", "") }()
	}
	logger.Printf("serving https://%s (CA %s), also in the network namespaces %v", addr, caFile, netns)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	logger.Print("stopped")
	return nil
}

// newCertificates returns a new CA (PEM) and a serving certificate it signed for ip, both valid
// for two days: long enough for a run, short enough not to matter if the CA file is left behind.
func newCertificates(ip net.IP) ([]byte, tls.Certificate, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "enhanced-liveness-operator test-olm registry CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(48 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: ip.String()},
		IPAddresses:  []net.IP{ip},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, tls.Certificate{}, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	return caPEM, tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
