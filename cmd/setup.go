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
	"fmt"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/admissionpolicy"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/containerrecreaterequest"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/daemonset"
	decisioncontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/decision"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/monitoring"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/nodepodprobe"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/trust"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/apiclock"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/certs"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
	webhookappsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/apps/v1alpha1"
	webhookcorev1 "github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/core/v1"
	webhookpolicyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/internal/webhook/policy/v1alpha1"
)

// identity is what the manager learns about itself at start and several steps share.
type identity struct {
	// user is the manager's own user name: the one user the immutability rules exempt.
	user string
	// keys holds the probe-context signing key: the pod webhook signs with it. Every replica
	// holds it (each serves the pod webhook).
	keys *signature.Store
	// trusted is the key set the mapping controller and the seal controller verify with.
	trusted *signature.Trust
	// apiClock is the API server's clock as the manager's requests measure it: whatever is
	// compared with an API server timestamp is judged on it (docs/reference.md#clocks).
	apiClock *apiclock.Clock
}

// newManager builds the manager: its client, its servers and its cache
// (internal/manager/managercache). The webhook server starts once certsReady is closed: when its
// serving certificate is in place (internal/manager/certs).
func newManager(f *flags, cfg config, certsReady chan struct{}, apiClock *apiclock.Clock) (ctrl.Manager, error) {
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, err
	}
	if err := f.scale.applyTo(restConfig); err != nil {
		return nil, err
	}
	restConfig.UserAgent = build.UserAgent(component)
	restConfig.Wrap(apiClock.Wrap) // every client of the manager measures the API server's clock
	return ctrl.NewManager(restConfig, ctrl.Options{
		Scheme:                 scheme,
		Metrics:                f.server.metricsOptions(),
		WebhookServer:          certs.GateServer(webhook.NewServer(f.server.webhookOptions()), certsReady),
		HealthProbeBindAddress: f.server.probeAddr,
		PprofBindAddress:       f.server.pprofAddr,
		LeaderElection:         f.server.enableLeaderElection,
		LeaderElectionID:       "bcbe718c.enhancedliveness.io",
		// Only enrolled pods are cached, stripped to what the controllers read; whatever must see
		// other pods, or all of one, reads with mgr.GetAPIReader().
		Cache: managercache.Options(cfg.cache),
		// LeaderElectionReleaseOnCancel stays off: the binary ends as soon as the manager stops,
		// so it would be safe, but a faster hand-over is not worth a cleanup added later being
		// cut short.
	})
}

// setupIdentity learns the manager's user name and adds the signing key's loader.
func setupIdentity(ctx context.Context, mgr ctrl.Manager, cfg config) (identity, error) {
	var id identity
	whoCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var err error
	if id.user, err = admissionpolicy.WhoAmI(whoCtx, mgr.GetClient(), 2*time.Second); err != nil {
		return id, fmt.Errorf("learning the manager's own identity (SelfSubjectReview): %w", err)
	}
	setupLog.Info("Manager identity", "username", id.user)
	id.keys = &signature.Store{Client: mgr.GetClient(), Reader: mgr.GetAPIReader(),
		Namespace: cfg.operatorNamespace, Name: cfg.signingKey}
	if err := mgr.Add(id.keys); err != nil {
		return id, fmt.Errorf("adding the probe-context signing key: %w", err)
	}
	id.trusted = &signature.Trust{Reader: mgr.GetClient(), Namespace: cfg.operatorNamespace, Keys: id.keys}
	return id, nil
}

// setupChecks adds the health and readiness checks: ready once the signing key is loaded (and,
// in setupWebhooks, once the webhook server serves with a valid certificate).
func setupChecks(mgr ctrl.Manager, id identity) error {
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	return mgr.AddReadyzCheck("probe-signing-key", id.keys.Checker)
}

// setupReconcilers adds every controller of the manager.
func setupReconcilers(mgr ctrl.Manager, cfg config, id identity) error {
	for _, c := range []struct {
		name  string
		setup func(ctrl.Manager) error
	}{
		{"apps-containerrecreaterequest", (&containerrecreaterequest.Reconciler{
			Client:    mgr.GetClient(),
			APIReader: mgr.GetAPIReader(),
			Recorder:  mgr.GetEventRecorder("containerrecreaterequest-controller"),
			Clock:     id.apiClock,
		}).SetupWithManager},
		{"apps-nodepodprobe", (&nodepodprobe.Reconciler{
			Client:            mgr.GetClient(),
			APIReader:         mgr.GetAPIReader(),
			Recorder:          mgr.GetEventRecorder("nodepodprobe-controller"),
			Keys:              id.trusted,
			OperatorNamespace: cfg.operatorNamespace,
		}).SetupWithManager},
		// The seal controller seals admitted pods for the daemons; the key-set controller keeps
		// the ConfigMap of public keys they verify with (both on the leader).
		{"probe-seal", (&trust.SealReconciler{
			Client: mgr.GetClient(), Recorder: mgr.GetEventRecorder("probe-seal-controller"),
			Keys: id.keys, Trust: id.trusted, OperatorNamespace: cfg.operatorNamespace, Now: id.apiClock.Now,
		}).SetupWithManager},
		{"probe-trust-keyset", (&trust.KeySetReconciler{
			Client: mgr.GetClient(), Keys: id.keys, Namespace: cfg.operatorNamespace,
		}).SetupWithManager},
		{"policy-decision", func(mgr ctrl.Manager) error {
			c := cfg.policy
			c.APIClock = id.apiClock // the RestartHolds and status.recentEvictions are on the API server's clock
			return decisioncontroller.SetupWithManager(mgr, c)
		}},
		{"admissionpolicy", (&admissionpolicy.Reconciler{
			Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), OperatorUsername: id.user,
			DaemonUsername: cfg.daemonUser,
		}).SetupWithManager},
		{"daemonset", (&daemonset.Reconciler{
			Client:          mgr.GetClient(),
			APIReader:       mgr.GetAPIReader(),
			Config:          cfg.daemon,
			OwnerDeployment: cfg.ownerDeployment,
		}).SetupWithManager},
		{"monitoring", func(mgr ctrl.Manager) error { return setupMonitoring(mgr, cfg) }},
	} {
		if err := c.setup(mgr); err != nil {
			return fmt.Errorf("creating controller %s: %w", c.name, err)
		}
	}
	return nil
}

// setupMonitoring adds the keeper of the PrometheusRule and the ServiceMonitor, unless
// --monitoring=off.
func setupMonitoring(mgr ctrl.Manager, cfg config) error {
	if !cfg.monitoring {
		return nil
	}
	k, err := monitoring.New(mgr.GetConfig(), mgr.GetAPIReader(), cfg.operatorNamespace, cfg.ownerDeployment)
	if err != nil {
		return err
	}
	return mgr.Add(k)
}

// setupWebhooks adds the pod, ContainerRecreateRequest and policy webhooks and their serving
// certificate, unless webhooks are off.
func setupWebhooks(mgr ctrl.Manager, cfg config, id identity, certsReady chan struct{}) error {
	if !cfg.webhooks {
		return nil
	}
	for _, w := range []struct {
		name  string
		setup func(ctrl.Manager) error
	}{
		{"Pod", func(mgr ctrl.Manager) error {
			return webhookcorev1.SetupPodWebhookWithManager(mgr, webhookcorev1.Options{
				OperatorNamespace: cfg.operatorNamespace, OperatorUsername: id.user, Keys: id.keys, Clock: id.apiClock,
			})
		}},
		{"ContainerRecreateRequest", webhookappsv1alpha1.SetupContainerRecreateRequestWebhookWithManager},
		{"EnhancedLivenessPolicy", webhookpolicyv1alpha1.SetupEnhancedLivenessPolicyWebhookWithManager},
	} {
		if err := w.setup(mgr); err != nil {
			return fmt.Errorf("creating webhook %s: %w", w.name, err)
		}
	}
	if err := certs.Setup(mgr, cfg.certs, certsReady); err != nil {
		return fmt.Errorf("setting up webhook certificates: %w", err)
	}
	// Not ready until the webhook server serves with a valid certificate.
	return mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker())
}
