package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lunadas/upgrade-operator/operator/manager"
)

// The chart's rotation arguments parse into CertRotation; half-given ones
// are refused with a line saying what is missing.
func TestCertFlags(t *testing.T) {
	cmd := newCommand()
	require.NoError(t, cmd.ParseFlags([]string{"--cert-rotation-secret=uo-system/uo-webhook-tls",
		"--cert-dns-name=uo-webhook.uo-system.svc", "--cert-validating-webhook=uo-validating"}))
	var opts manager.Options
	opts.Webhook.CertRotation.DNSName = "uo-webhook.uo-system.svc"
	opts.Webhook.CertRotation.ValidatingWebhook = "uo-validating"
	require.NoError(t, certFlags(&opts, "uo-system/uo-webhook-tls"))
	assert.Equal(t, types.NamespacedName{Namespace: "uo-system", Name: "uo-webhook-tls"}, opts.Webhook.CertRotation.Secret)
	assert.True(t, opts.Webhook.CertRotation.Enabled())

	for secret, want := range map[string]string{
		"uo-webhook-tls":   "want <namespace>/<name>",
		"a/b/c":            "want <namespace>/<name>",
		"uo-system/uo-tls": "needs --cert-dns-name",
	} {
		err := certFlags(&manager.Options{}, secret)
		require.Error(t, err, secret)
		assert.Contains(t, err.Error(), want, secret)
	}
	o := manager.Options{}
	o.Webhook.CertRotation.DNSName = "x.svc"
	assert.ErrorContains(t, certFlags(&o, ""), "need --cert-rotation-secret")
	assert.NoError(t, certFlags(&manager.Options{}, ""))
}
