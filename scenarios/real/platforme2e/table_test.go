//go:build e2e

package platforme2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"k8s.io/client-go/rest"
)

// row is `kubectl get upgrade -o wide` for `system`: column name → cell,
// as the API server's Table (the CRD's printer columns) gives it.
type row map[string]string

// tableRow asks the API server for the Upgrade Table, as kubectl does,
// and returns the names of the default (non-wide) columns and the row of
// `system` with every column.
func tableRow(cfg *rest.Config) ([]string, row, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	u, err := url.JoinPath(cfg.Host, "apis/upgrade.starlingx.io/v1alpha1/upgrades")
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, err
	}
	var table tableBody
	if err := json.Unmarshal(body, &table); err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %s", u, err, body)
	}
	if len(table.Rows) != 1 {
		return nil, nil, fmt.Errorf("want one Upgrade row, got %d: %s", len(table.Rows), body)
	}
	names, r := table.Rows[0].row(table.ColumnDefinitions)
	return names, r, nil
}

// tableWatch is `kubectl get upgrade -w -o wide`: a watch whose events the
// API server renders as Tables, so every write of `system` gives one row
// (no polling, no update missed between two reads).
type tableWatch struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	names []string
	rows  []row
	err   error
}

// watchTableRows starts the watch; stop ends it and returns the default
// columns' names and the rows, consecutive duplicates dropped.
func watchTableRows(ctx context.Context, cfg *rest.Config) (*tableWatch, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	u, err := url.JoinPath(cfg.Host, "apis/upgrade.starlingx.io/v1alpha1/upgrades")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u+"?watch=true", nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("%s: %s: %s", u, resp.Status, body)
	}
	w := &tableWatch{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		var columns []tableColumn
		for {
			var ev struct {
				Type   string    `json:"type"`
				Object tableBody `json:"object"`
			}
			if err := dec.Decode(&ev); err != nil {
				if ctx.Err() == nil {
					w.mu.Lock()
					w.err = err
					w.mu.Unlock()
				}
				return
			}
			if len(ev.Object.ColumnDefinitions) > 0 {
				columns = ev.Object.ColumnDefinitions
			}
			for _, r := range ev.Object.Rows {
				names, got := r.row(columns)
				w.mu.Lock()
				w.names = names
				if len(w.rows) == 0 || fmt.Sprint(w.rows[len(w.rows)-1]) != fmt.Sprint(got) {
					w.rows = append(w.rows, got)
				}
				w.mu.Unlock()
			}
		}
	}()
	return w, nil
}

// last returns the newest row, or nil.
func (w *tableWatch) last() row {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.rows) == 0 {
		return nil
	}
	return w.rows[len(w.rows)-1]
}

func (w *tableWatch) stop() ([]string, []row, error) {
	w.cancel()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.names, w.rows, w.err
}

type tableColumn struct {
	Name     string `json:"name"`
	Priority int    `json:"priority"`
}

type tableRowCells struct {
	Cells []any `json:"cells"`
}

type tableBody struct {
	ColumnDefinitions []tableColumn   `json:"columnDefinitions"`
	Rows              []tableRowCells `json:"rows"`
}

// row maps the cells to their upper-cased column names and returns the
// names of the default (priority 0) columns too.
func (r tableRowCells) row(columns []tableColumn) ([]string, row) {
	var names []string
	out := row{}
	for i, c := range columns {
		name := strings.ToUpper(c.Name)
		if c.Priority == 0 {
			names = append(names, name)
		}
		out[name] = ""
		if i < len(r.Cells) && r.Cells[i] != nil {
			out[name] = fmt.Sprint(r.Cells[i])
		}
	}
	return names, out
}
