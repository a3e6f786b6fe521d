//go:build e2e

package platforme2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

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
	var table struct {
		ColumnDefinitions []struct {
			Name     string `json:"name"`
			Priority int    `json:"priority"`
		} `json:"columnDefinitions"`
		Rows []struct {
			Cells []any `json:"cells"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(body, &table); err != nil {
		return nil, nil, fmt.Errorf("%s: %w: %s", u, err, body)
	}
	if len(table.Rows) != 1 {
		return nil, nil, fmt.Errorf("want one Upgrade row, got %d: %s", len(table.Rows), body)
	}
	var names []string
	r := row{}
	for i, c := range table.ColumnDefinitions {
		name := strings.ToUpper(c.Name)
		if c.Priority == 0 {
			names = append(names, name)
		}
		r[name] = ""
		if v := table.Rows[0].Cells[i]; v != nil {
			r[name] = fmt.Sprint(v)
		}
	}
	return names, r, nil
}
