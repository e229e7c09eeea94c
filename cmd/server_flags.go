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
	"crypto/tls"
	"flag"

	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/certs"
)

// serverFlags are the manager's servers (metrics, health, pprof, webhooks) and leader election,
// as Kubebuilder scaffolds them.
type serverFlags struct {
	metricsAddr                                      string
	metricsCertPath, metricsCertName, metricsCertKey string
	webhookCertPath, webhookCertName, webhookCertKey string
	webhookPort                                      int
	enableLeaderElection                             bool
	probeAddr, pprofAddr                             string
	secureMetrics                                    bool
	enableHTTP2                                      bool
}

func bindServerFlags(fs *flag.FlagSet) *serverFlags {
	f := &serverFlags{}
	fs.StringVar(&f.metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	fs.StringVar(&f.probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	fs.StringVar(&f.pprofAddr, "pprof-bind-address", "0", "The address Go's /debug/pprof endpoints bind to, "+
		"unauthenticated: keep it on loopback (kubectl port-forward) or leave it off (0, the default).")
	fs.BoolVar(&f.enableLeaderElection, "leader-elect", false,
		"Enable leader election for controller manager. "+
			"Enabling this will ensure there is only one active controller manager.")
	fs.BoolVar(&f.secureMetrics, "metrics-secure", true,
		"If set, the metrics endpoint is served securely via HTTPS. Use --metrics-secure=false to use HTTP instead.")
	fs.StringVar(&f.webhookCertPath, "webhook-cert-path", "", "The directory that contains the webhook certificate.")
	fs.StringVar(&f.webhookCertName, "webhook-cert-name", "tls.crt", "The name of the webhook certificate file.")
	fs.StringVar(&f.webhookCertKey, "webhook-cert-key", "tls.key", "The name of the webhook key file.")
	fs.IntVar(&f.webhookPort, "webhook-port", 9443, "Port the webhook server listens on. "+
		"Defaults to 9443. Set -1 to disable the webhook server.")
	fs.StringVar(&f.metricsCertPath, "metrics-cert-path", "",
		"The directory that contains the metrics server certificate.")
	fs.StringVar(&f.metricsCertName, "metrics-cert-name", "tls.crt", "The name of the metrics server certificate file.")
	fs.StringVar(&f.metricsCertKey, "metrics-cert-key", "tls.key", "The name of the metrics server key file.")
	fs.BoolVar(&f.enableHTTP2, "enable-http2", false,
		"If set, HTTP/2 will be enabled for the metrics and webhook servers")
	return f
}

// tlsOptions disables HTTP/2 unless --enable-http2: HTTP/2 servers are exposed to the Stream
// Cancellation and Rapid Reset denial-of-service attacks.
func (f *serverFlags) tlsOptions() []func(*tls.Config) {
	if f.enableHTTP2 {
		return nil
	}
	return []func(*tls.Config){func(c *tls.Config) {
		setupLog.Info("Disabling HTTP/2")
		c.NextProtos = []string{"http/1.1"}
	}}
}

// webhookCertDir is where the webhook server reads its certificate: --webhook-cert-path, else
// certs.DefaultCertDir, where the manager writes its own (cert-mode self) or OLM mounts one.
func (f *serverFlags) webhookCertDir() string {
	if f.webhookCertPath != "" {
		return f.webhookCertPath
	}
	return certs.DefaultCertDir
}

// webhookOptions is the webhook server.
func (f *serverFlags) webhookOptions() webhook.Options {
	o := webhook.Options{TLSOpts: f.tlsOptions(), Port: f.webhookPort, CertDir: f.webhookCertDir()}
	if f.webhookCertPath != "" {
		setupLog.Info("Initializing webhook certificate watcher using provided certificates",
			"webhook-cert-path", f.webhookCertPath, "webhook-cert-name", f.webhookCertName,
			"webhook-cert-key", f.webhookCertKey)
		o.CertName, o.KeyName = f.webhookCertName, f.webhookCertKey
	}
	return o
}

// metricsOptions is the metrics server, enabled in config/default/kustomization.yaml. Served
// securely, access is authenticated and authorized (the RBAC is in config/rbac); without
// --metrics-cert-path controller-runtime serves it with a self-signed certificate generated at
// start (no cert-manager is used).
func (f *serverFlags) metricsOptions() metricsserver.Options {
	o := metricsserver.Options{BindAddress: f.metricsAddr, SecureServing: f.secureMetrics, TLSOpts: f.tlsOptions()}
	if f.secureMetrics {
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
	}
	if f.metricsCertPath != "" {
		setupLog.Info("Initializing metrics certificate watcher using provided certificates",
			"metrics-cert-path", f.metricsCertPath, "metrics-cert-name", f.metricsCertName,
			"metrics-cert-key", f.metricsCertKey)
		o.CertDir, o.CertName, o.KeyName = f.metricsCertPath, f.metricsCertName, f.metricsCertKey
	}
	return o
}
