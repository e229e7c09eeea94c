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

package certs

import (
	"strings"
	"testing"
)

func TestParseMode(t *testing.T) {
	cases := []struct {
		in      string
		want    Mode
		wantErr bool
	}{
		{in: "self", want: ModeSelf},
		{in: "olm", want: ModeOLM},
		{in: "", wantErr: true},
		{in: "cert-manager", wantErr: true},
		{in: "OLM", wantErr: true},
	}
	for _, tc := range cases {
		got, err := ParseMode(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestValidate(t *testing.T) {
	full := Options{
		Mode: ModeSelf, Namespace: "ns", SecretName: "s", ServiceName: "svc", CertDir: "/tmp/x",
		MutatingWebhook: "m", ValidatingWebhook: "v",
	}
	cases := []struct {
		name    string
		mutate  func(*Options)
		wantErr string
	}{
		{name: "complete", mutate: func(*Options) {}},
		{name: "olm needs nothing", mutate: func(o *Options) { *o = Options{Mode: ModeOLM} }},
		{name: "unknown mode", mutate: func(o *Options) { o.Mode = "x" }, wantErr: "unknown certificate mode"},
		{name: "no secret", mutate: func(o *Options) { o.SecretName = "" }, wantErr: "secret name"},
		{name: "no service", mutate: func(o *Options) { o.ServiceName = "" }, wantErr: "service name"},
		{name: "no namespace", mutate: func(o *Options) { o.Namespace = "" }, wantErr: "namespace"},
		{name: "no cert dir", mutate: func(o *Options) { o.CertDir = "" }, wantErr: "certificate directory"},
		{name: "only mutating", mutate: func(o *Options) { o.ValidatingWebhook = "" }},
		{name: "no webhook", mutate: func(o *Options) { o.ValidatingWebhook, o.MutatingWebhook = "", "" }, wantErr: "webhook configuration"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := full
			tc.mutate(&o)
			err := o.Validate()
			if tc.wantErr == "" && err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

func TestDNSNames(t *testing.T) {
	got := Options{Namespace: "enhanced-liveness-system", ServiceName: "webhook"}.DNSNames()
	want := []string{
		"webhook.enhanced-liveness-system.svc",
		"webhook.enhanced-liveness-system.svc.cluster.local",
		"webhook.enhanced-liveness-system",
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("DNSNames = %v, want %v", got, want)
	}
}
