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
	"context"
	"crypto/tls"
	"flag"
	"os"
	"time"

	// Import all Kubernetes client auth plugins (e.g. Azure, GCP, OIDC, etc.)
	// to ensure that exec-entrypoint and run can make use of them.
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/certs"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/admissionpolicy"
	appscontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/apps"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	policycontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/policy"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/index"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/probesig"
	webhookappsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/apps/v1alpha1"
	webhookcorev1 "github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/core/v1"
	webhookpolicyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/policy/v1alpha1"
	// +kubebuilder:scaffold:imports
)

var (
	scheme   = runtime.NewScheme()
	setupLog = ctrl.Log.WithName("setup")
)

func init() {
	utilruntime.Must(clientgoscheme.AddToScheme(scheme))

	utilruntime.Must(appsv1alpha1.AddToScheme(scheme))
	utilruntime.Must(policyv1alpha1.AddToScheme(scheme))
	// +kubebuilder:scaffold:scheme
}

// nolint:gocyclo
func main() {
	var metricsAddr string
	var metricsCertPath, metricsCertName, metricsCertKey string
	var webhookCertPath, webhookCertName, webhookCertKey string
	var webhookPort int
	var enableLeaderElection bool
	var probeAddr, pprofAddr string
	var secureMetrics bool
	var enableHTTP2 bool
	var tlsOpts []func(*tls.Config)
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "The address the metrics endpoint binds to. "+
		"Use :8443 for HTTPS or :8080 for HTTP, or leave as 0 to disable the metrics service.")
	flag.StringVar(&probeAddr, "health-probe-bind-address", ":8081", "The address the probe endpoint binds to.")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "0", "The address Go's /debug/pprof endpoints bind to, "+
		"unauthenticated: keep it on loopback (kubectl port-forward) or leave it off (0, the default).")
	flag.BoolVar(&enableLeaderElection, "leader-elect", false,
		"Enable leader election for controller manager. "+
			"Enabling this will ensure there is only one active controller manager.")
	flag.BoolVar(&secureMetrics, "metrics-secure", true,
		"If set, the metrics endpoint is served securely via HTTPS. Use --metrics-secure=false to use HTTP instead.")
	flag.StringVar(&webhookCertPath, "webhook-cert-path", "", "The directory that contains the webhook certificate.")
	flag.StringVar(&webhookCertName, "webhook-cert-name", "tls.crt", "The name of the webhook certificate file.")
	flag.StringVar(&webhookCertKey, "webhook-cert-key", "tls.key", "The name of the webhook key file.")
	flag.IntVar(&webhookPort, "webhook-port", 9443, "Port the webhook server listens on. "+
		"Defaults to 9443. Set -1 to disable the webhook server.")
	flag.StringVar(&metricsCertPath, "metrics-cert-path", "",
		"The directory that contains the metrics server certificate.")
	flag.StringVar(&metricsCertName, "metrics-cert-name", "tls.crt", "The name of the metrics server certificate file.")
	flag.StringVar(&metricsCertKey, "metrics-cert-key", "tls.key", "The name of the metrics server key file.")
	flag.BoolVar(&enableHTTP2, "enable-http2", false,
		"If set, HTTP/2 will be enabled for the metrics and webhook servers")
	opts := zap.Options{
		Development: true,
	}
	opts.BindFlags(flag.CommandLine)
	policyFlags := bindPolicyFlags(flag.CommandLine)
	pkgFlags := bindPackagingFlags(flag.CommandLine)
	scale := bindScaleFlags(flag.CommandLine)
	flag.Parse()
	mustFlagsFromEnv(flag.CommandLine) // ELO_<FLAG> for what the command line does not set (env_flags.go)

	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))

	// if the enable-http2 flag is false (the default), http/2 should be disabled
	// due to its vulnerabilities. More specifically, disabling http/2 will
	// prevent from being vulnerable to the HTTP/2 Stream Cancellation and
	// Rapid Reset CVEs. For more information see:
	// - https://github.com/advisories/GHSA-qppj-fm5r-hxr3
	// - https://github.com/advisories/GHSA-4374-p667-p6c8
	disableHTTP2 := func(c *tls.Config) {
		setupLog.Info("Disabling HTTP/2")
		c.NextProtos = []string{"http/1.1"}
	}

	if !enableHTTP2 {
		tlsOpts = append(tlsOpts, disableHTTP2)
	}

	// Initial webhook TLS options
	webhookTLSOpts := tlsOpts
	webhookServerOptions := webhook.Options{
		TLSOpts: webhookTLSOpts,
		Port:    webhookPort,
	}

	if len(webhookCertPath) > 0 {
		setupLog.Info("Initializing webhook certificate watcher using provided certificates",
			"webhook-cert-path", webhookCertPath, "webhook-cert-name", webhookCertName, "webhook-cert-key", webhookCertKey)

		webhookServerOptions.CertDir = webhookCertPath
		webhookServerOptions.CertName = webhookCertName
		webhookServerOptions.KeyName = webhookCertKey
	}

	// The webhook server starts once its serving certificate is in place (internal/certs).
	if webhookServerOptions.CertDir == "" {
		webhookServerOptions.CertDir = certs.DefaultCertDir
	}
	certsReady := make(chan struct{})
	webhookServer := certs.GateServer(webhook.NewServer(webhookServerOptions), certsReady)

	// Metrics endpoint is enabled in 'config/default/kustomization.yaml'. The Metrics options configure the server.
	// More info:
	// - https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.0/pkg/metrics/server
	// - https://book.kubebuilder.io/reference/metrics.html
	metricsServerOptions := metricsserver.Options{
		BindAddress:   metricsAddr,
		SecureServing: secureMetrics,
		TLSOpts:       tlsOpts,
	}

	if secureMetrics {
		// FilterProvider is used to protect the metrics endpoint with authn/authz.
		// These configurations ensure that only authorized users and service accounts
		// can access the metrics endpoint. The RBAC are configured in 'config/rbac/kustomization.yaml'. More info:
		// https://pkg.go.dev/sigs.k8s.io/controller-runtime@v0.25.0/pkg/metrics/filters#WithAuthenticationAndAuthorization
		metricsServerOptions.FilterProvider = filters.WithAuthenticationAndAuthorization
	}

	// Without --metrics-cert-path controller-runtime serves metrics with a self-signed certificate
	// generated at start; access is still authenticated and authorized (no cert-manager is used).
	if len(metricsCertPath) > 0 {
		setupLog.Info("Initializing metrics certificate watcher using provided certificates",
			"metrics-cert-path", metricsCertPath, "metrics-cert-name", metricsCertName, "metrics-cert-key", metricsCertKey)

		metricsServerOptions.CertDir = metricsCertPath
		metricsServerOptions.CertName = metricsCertName
		metricsServerOptions.KeyName = metricsCertKey
	}

	restConfig := ctrl.GetConfigOrDie()
	if err := scale.applyTo(restConfig); err != nil {
		setupLog.Error(err, "Invalid flag")
		os.Exit(1)
	}
	mgr, err := ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsServerOptions,
		WebhookServer:          webhookServer,
		HealthProbeBindAddress: probeAddr,
		PprofBindAddress:       pprofAddr,
		LeaderElection:         enableLeaderElection,
		LeaderElectionID:       "bcbe718c.enhancedliveness.io",
		// Only enrolled pods are cached, stripped to what the controllers read; whatever must see
		// other pods, or all of one, reads with mgr.GetAPIReader().
		Cache: scale.cacheOptions(policyFlags.operatorNamespace),
		// LeaderElectionReleaseOnCancel defines if the leader should step down voluntarily
		// when the Manager ends. This requires the binary to immediately end when the
		// Manager is stopped, otherwise, this setting is unsafe. Setting this significantly
		// speeds up voluntary leader transitions as the new leader don't have to wait
		// LeaseDuration time first.
		//
		// In the default scaffold provided, the program ends immediately after
		// the manager stops, so would be fine to enable this option. However,
		// if you are doing or is intended to do any operation such as perform cleanups
		// after the manager stops then its usage might be unsafe.
		// LeaderElectionReleaseOnCancel: true,
	})
	if err != nil {
		setupLog.Error(err, "Failed to start manager")
		os.Exit(1)
	}

	// The manager's own identity: the one user the immutability rules exempt.
	whoCtx, whoCancel := context.WithTimeout(context.Background(), time.Minute)
	operatorUser, err := admissionpolicy.WhoAmI(whoCtx, mgr.GetClient(), 2*time.Second)
	whoCancel()
	if err != nil {
		setupLog.Error(err, "Failed to learn the manager's own identity (SelfSubjectReview)")
		os.Exit(1)
	}
	setupLog.Info("Manager identity", "username", operatorUser)
	// Every replica holds the probe-context signing key (each serves the pod webhook).
	keys := &probesig.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Namespace: policyFlags.operatorNamespace, Name: pkgFlags.probeSigningSecret}
	if err := mgr.Add(keys); err != nil {
		setupLog.Error(err, "Failed to add the probe-context signing key")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("probe-signing-key", keys.Checker); err != nil {
		setupLog.Error(err, "Failed to set up the signing key ready check")
		os.Exit(1)
	}

	// Cache indexes are registered once, here, before the controllers that query them.
	if err := index.AddDefaultIndexes(context.Background(), mgr); err != nil {
		setupLog.Error(err, "Failed to register cache indexes")
		os.Exit(1)
	}
	if err := (&appscontroller.ContainerRecreateRequestReconciler{
		Client:    mgr.GetClient(),
		APIReader: mgr.GetAPIReader(),
		Recorder:  mgr.GetEventRecorder("containerrecreaterequest-controller"),
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Failed to create controller", "controller", "apps-containerrecreaterequest")
		os.Exit(1)
	}
	if err := (&appscontroller.NodePodProbeReconciler{
		Client:            mgr.GetClient(),
		Recorder:          mgr.GetEventRecorder("nodepodprobe-controller"),
		Keys:              keys,
		OperatorNamespace: policyFlags.operatorNamespace,
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Failed to create controller", "controller", "apps-nodepodprobe")
		os.Exit(1)
	}
	policyConfig, err := policyFlags.config()
	if err != nil {
		setupLog.Error(err, "Invalid flag")
		os.Exit(1)
	}
	policyConfig.MaxConcurrentReconciles = scale.decisionWorkers
	if err := policycontroller.SetupWithManager(mgr, policyConfig); err != nil {
		setupLog.Error(err, "Failed to create controller", "controller", "policy-decision")
		os.Exit(1)
	}
	// nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		if err := webhookcorev1.SetupPodWebhookWithManager(mgr, webhookcorev1.Options{
			OperatorNamespace: operatorNamespace(), OperatorUsername: operatorUser, Keys: keys,
		}); err != nil {
			setupLog.Error(err, "Failed to create webhook", "webhook", "Pod")
			os.Exit(1)
		}
	}
	// nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		if err := webhookappsv1alpha1.SetupContainerRecreateRequestWebhookWithManager(mgr); err != nil {
			setupLog.Error(err, "Failed to create webhook", "webhook", "ContainerRecreateRequest")
			os.Exit(1)
		}
	}
	// nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		if err := webhookpolicyv1alpha1.SetupEnhancedLivenessPolicyWebhookWithManager(mgr); err != nil {
			setupLog.Error(err, "Failed to create webhook", "webhook", "EnhancedLivenessPolicy")
			os.Exit(1)
		}
	}
	if err := (&admissionpolicy.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OperatorUsername: operatorUser,
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Failed to create controller", "controller", "admissionpolicy")
		os.Exit(1)
	}
	daemonConfig, err := pkgFlags.daemonConfig(policyFlags.operatorNamespace)
	if err != nil {
		setupLog.Error(err, "Invalid flag")
		os.Exit(1)
	}
	if err := (&daemonset.Reconciler{
		Client:          mgr.GetClient(),
		APIReader:       mgr.GetAPIReader(),
		Config:          daemonConfig,
		OwnerDeployment: pkgFlags.managerDeployment,
	}).SetupWithManager(mgr); err != nil {
		setupLog.Error(err, "Failed to create controller", "controller", "daemonset")
		os.Exit(1)
	}
	// nolint:goconst
	if os.Getenv("ENABLE_WEBHOOKS") != "false" {
		certOpts, err := pkgFlags.certOptions(policyFlags.operatorNamespace, webhookServerOptions.CertDir)
		if err == nil {
			err = certs.Setup(mgr, certOpts, certsReady)
		}
		if err != nil {
			setupLog.Error(err, "Failed to set up webhook certificates")
			os.Exit(1)
		}
		// Not ready until the webhook server serves with a valid certificate.
		if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
			setupLog.Error(err, "Failed to set up webhook ready check")
			os.Exit(1)
		}
	}
	// +kubebuilder:scaffold:builder

	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up health check")
		os.Exit(1)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		setupLog.Error(err, "Failed to set up ready check")
		os.Exit(1)
	}

	setupLog.Info("Starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "Failed to run manager")
		os.Exit(1)
	}
}

// operatorNamespace is where the manager runs (downward API POD_NAMESPACE), else the default.
func operatorNamespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return appsv1alpha1.DefaultOperatorNamespace
}
