package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/lunadas/upgrade-operator/fakevim"
	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

func run(ctx context.Context, o *options, stdout io.Writer) error {
	start := time.Now().UTC().Truncate(time.Second)
	cfg, err := o.modelConfig(start)
	if err != nil {
		return err
	}
	model, err := starlingx.New(cfg)
	if err != nil {
		return err
	}
	clock := fakevim.NewSpeedClock(start, o.speed, nil)
	srv, err := fakevim.New(o.serverOptions(model, clock))
	if err != nil {
		return err
	}
	listeners, urls, err := o.openListeners(srv)
	if err != nil {
		return err
	}
	srv.SetURLs(urls)
	fmt.Fprintf(stdout, "fakevim: %s system on %s at %gx speed\n", cfg.Mode, cfg.DeployedRelease, o.speed)
	fmt.Fprintf(stdout, "  keystone %s/v3\n  vim      %s\n  usm      %s\n  sysinv   %s\n  admin    %s/admin/state\n",
		urls.Keystone, urls.VIM, urls.USM, urls.Sysinv, urls.VIM)
	return o.serve(ctx, listeners)
}

type listener struct {
	ln      net.Listener
	handler http.Handler
}

// openListeners opens one listener for all services (--listen) or one per
// service; /admin is served on each.
func (o *options) openListeners(srv *fakevim.Server) ([]listener, fakevim.ServiceURLs, error) {
	withAdmin := func(h http.Handler) http.Handler {
		mux := http.NewServeMux()
		mux.Handle("/", h)
		mux.Handle("/admin/", srv.AdminHandler())
		return mux
	}
	if o.listen != "" {
		ln, err := net.Listen("tcp", o.listen)
		if err != nil {
			return nil, fakevim.ServiceURLs{}, fmt.Errorf("listen on %s: %w", o.listen, err)
		}
		u := o.url(ln)
		return []listener{{ln, srv.Handler()}}, fakevim.ServiceURLs{Keystone: u, VIM: u, USM: u, Sysinv: u}, nil
	}
	specs := []struct {
		addr string
		h    http.Handler
		url  *string
	}{{o.keystoneAddr, srv.KeystoneHandler(), nil}, {o.vimAddr, srv.VIMHandler(), nil}, {o.usmAddr, srv.USMHandler(), nil}, {o.sysinvAddr, srv.SysinvHandler(), nil}}
	var urls fakevim.ServiceURLs
	specs[0].url, specs[1].url, specs[2].url, specs[3].url = &urls.Keystone, &urls.VIM, &urls.USM, &urls.Sysinv
	var out []listener
	for _, sp := range specs {
		ln, err := net.Listen("tcp", sp.addr)
		if err != nil {
			for _, l := range out {
				l.ln.Close()
			}
			return nil, urls, fmt.Errorf("listen on %s: %w (use --listen to serve every service on one port)", sp.addr, err)
		}
		*sp.url = o.url(ln)
		out = append(out, listener{ln, withAdmin(sp.h)})
	}
	return out, urls, nil
}

func (o *options) url(ln net.Listener) string {
	scheme := "http"
	if o.tlsCert != "" {
		scheme = "https"
	}
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	return scheme + "://" + net.JoinHostPort(o.advertiseHost, port)
}

// serve runs every listener until ctx ends, then shuts them down.
func (o *options) serve(ctx context.Context, ls []listener) error {
	errs := make(chan error, len(ls))
	var servers []*http.Server
	for _, l := range ls {
		hs := &http.Server{Handler: l.handler, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, hs)
		go func(l listener) {
			var err error
			if o.tlsCert != "" {
				err = hs.ServeTLS(l.ln, o.tlsCert, o.tlsKey)
			} else {
				err = hs.Serve(l.ln)
			}
			if !errors.Is(err, http.ErrServerClosed) {
				errs <- err
			}
		}(l)
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errs:
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, hs := range servers {
		_ = hs.Shutdown(sctx)
	}
	return err
}
