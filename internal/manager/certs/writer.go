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
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

const (
	// CertFile and KeyFile are the rotator's default Secret keys, which are also the file names
	// controller-runtime's webhook server reads from its CertDir.
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// certWriter copies the serving certificate from the rotator's Secret into CertDir as soon as
// the Secret changes. A Secret volume would get there only on the kubelet's periodic sync (up
// to minutes), which delays readiness and can outlast the rotator's wait for the files.
// The webhook server's certwatcher picks up the rewritten files, so rotation needs no restart.
type certWriter struct {
	secrets cache.Cache
	ctrl    controller.Controller
}

var _ interface {
	manager.Runnable
	manager.LeaderElectionRunnable
} = &certWriter{}

// addCertWriter adds a certWriter for o to mgr. Its informer sees the one Secret only, so the
// manager's cache (which does not hold Secrets) is left alone.
func addCertWriter(mgr ctrl.Manager, o Options) error {
	key := types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName}
	c, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:            mgr.GetScheme(),
		Mapper:            mgr.GetRESTMapper(),
		DefaultNamespaces: map[string]cache.Config{o.Namespace: {}},
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", o.SecretName)},
		},
	})
	if err != nil {
		return fmt.Errorf("certificate writer cache: %w", err)
	}
	dir := o.CertDir
	rec := reconcile.Func(func(ctx context.Context, _ reconcile.Request) (reconcile.Result, error) {
		s := &corev1.Secret{}
		if err := c.Get(ctx, key, s); err != nil {
			// A deleted Secret leaves the files in place: the rotator recreates it.
			return reconcile.Result{}, client.IgnoreNotFound(err)
		}
		written, err := writeKeyPair(dir, s.Data[CertFile], s.Data[KeyFile])
		if err != nil {
			return reconcile.Result{}, err
		}
		if written {
			ctrl.LoggerFrom(ctx).Info("Wrote the webhook serving certificate", "dir", dir)
		}
		return reconcile.Result{}, nil
	})
	name := o.ControllerName + "-files"
	ct, err := controller.NewUnmanaged(name, controller.Options{
		Reconciler:         rec,
		SkipNameValidation: mgr.GetControllerOptions().SkipNameValidation,
		Logger:             mgr.GetLogger().WithName(name),
		// Write errors (full or read-only volume) are retried for as long as they last, at
		// most every 30 s.
		RateLimiter: workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](
			100*time.Millisecond, 30*time.Second),
	})
	if err != nil {
		return err
	}
	if err := ct.Watch(source.Kind(c, &corev1.Secret{}, &handler.TypedEnqueueRequestForObject[*corev1.Secret]{})); err != nil {
		return err
	}
	return mgr.Add(&certWriter{secrets: c, ctrl: ct})
}

// NeedLeaderElection is false: every replica serves webhooks and needs the files.
func (w *certWriter) NeedLeaderElection() bool { return false }

// Start runs the Secret informer and the controller until ctx ends.
func (w *certWriter) Start(ctx context.Context) error {
	// The informer stops with the controller, also when the controller gives up on its sync.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cacheErr := make(chan error, 1)
	go func() { cacheErr <- w.secrets.Start(ctx) }()
	err := w.ctrl.Start(ctx)
	cancel()
	if cerr := <-cacheErr; err == nil {
		err = cerr
	}
	return err
}

// writeKeyPair writes cert and key into dir when both are present and differ from the files.
// The key goes first: the rotator reports the certificate mounted once the cert file exists,
// and the webhook server then loads both.
func writeKeyPair(dir string, cert, key []byte) (written bool, err error) {
	if len(cert) == 0 || len(key) == 0 {
		return false, nil
	}
	k, err := writeIfChanged(filepath.Join(dir, KeyFile), key, 0o600)
	if err != nil {
		return false, err
	}
	c, err := writeIfChanged(filepath.Join(dir, CertFile), cert, 0o644)
	return k || c, err
}

// writeIfChanged replaces path with data unless it already holds exactly that. A temporary file
// in the same directory renamed over path means readers never see a partial file.
func writeIfChanged(path string, data []byte, mode os.FileMode) (bool, error) {
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, data):
		return false, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(mode); err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	return true, nil
}
