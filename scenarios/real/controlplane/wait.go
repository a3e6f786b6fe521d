package controlplane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// pollInterval is how often start-up re-checks a readiness condition.
const pollInterval = 100 * time.Millisecond

// poll calls check until it returns true, a started component exits, or ctx
// ends; what names the condition in the error.
func (cp *ControlPlane) poll(ctx context.Context, what string, check func(context.Context) (bool, error)) error {
	var lastErr error
	for {
		if err := cp.anyExited(); err != nil {
			return fmt.Errorf("controlplane: waiting for %s: %w", what, err)
		}
		ok, err := check(ctx)
		if ok {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("controlplane: waiting for %s: %w (last error: %v); logs in %s", what, ctx.Err(), lastErr, cp.LogDir)
		case <-time.After(pollInterval):
		}
	}
}

func (cp *ControlPlane) anyExited() error {
	cp.mu.Lock()
	procs := append([]*process(nil), cp.procs...)
	cp.mu.Unlock()
	var errs []error
	for _, p := range procs {
		if err := p.exited(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitAPIServer waits until GET /readyz answers "ok" (etcd reachable,
// post-start hooks done: RBAC bootstrap roles and priority levels exist).
func (cp *ControlPlane) waitAPIServer(ctx context.Context, client kubernetes.Interface) error {
	return cp.poll(ctx, "kube-apiserver /readyz", func(ctx context.Context) (bool, error) {
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return false, err
		}
		return string(body) == "ok", nil
	})
}

// waitScheduler waits until the scheduler's /readyz (anonymous access is
// always allowed there) answers 200: its informers have synced.
func (cp *ControlPlane) waitScheduler(ctx context.Context, port int) error {
	// The scheduler serves a self-signed certificate it generates itself.
	httpClient := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, //nolint:gosec // loopback, self-signed
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/readyz", port)
	return cp.poll(ctx, "kube-scheduler "+url, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, err
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("status %s", resp.Status)
	})
}

// waitDefaultServiceAccount waits for the ServiceAccount default/default,
// which kube-controller-manager's serviceaccount controller creates; the
// ServiceAccount admission plugin rejects pods until it exists.
func (cp *ControlPlane) waitDefaultServiceAccount(ctx context.Context, client kubernetes.Interface) error {
	return cp.poll(ctx, "ServiceAccount default/default", func(ctx context.Context) (bool, error) {
		_, err := client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
}
