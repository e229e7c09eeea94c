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
	"crypto/x509"
	"net"
	"strings"
	"testing"
)

// The serving certificate is valid for the listen IP under the CA written to ca.crt, and for
// nothing else.
func TestCertificatesVerifyForTheIPOnly(t *testing.T) {
	ip := net.ParseIP("127.0.0.1")
	caPEM, cert, err := newCertificates(ip)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA is not PEM")
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	opts := x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1",
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	if _, err := leaf.Verify(opts); err != nil {
		t.Fatalf("verify for 127.0.0.1: %v", err)
	}
	opts.DNSName = "127.0.0.2"
	if _, err := leaf.Verify(opts); err == nil {
		t.Fatal("verified for 127.0.0.2")
	}
}

func TestRunRefusesANonLoopbackAddress(t *testing.T) {
	err := run("192.0.2.1:35000", t.TempDir(), false, nil)
	if err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("err = %v, want a loopback error", err)
	}
}
