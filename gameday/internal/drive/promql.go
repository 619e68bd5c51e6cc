package drive

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gameday-dev/gameday/internal/noredirect"
	"github.com/gameday-dev/gameday/internal/redact"
)

// promSample is one series of an instant vector.
type promSample struct {
	labels map[string]string
	value  float64
}

// promQuery asks a Prometheus server (its HTTP API, /api/v1/query) for
// the instant value of a PromQL expression. A scalar answers as one series
// without labels.
func promQuery(hc *http.Client, server, query string) ([]promSample, error) {
	u := strings.TrimRight(server, "/") + "/api/v1/query?query=" + url.QueryEscape(query)
	resp, err := hc.Get(u)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", redact.Error(err))
	}
	defer resp.Body.Close()
	if noredirect.Is(resp) {
		// Its body quotes the Location, which may carry a secret.
		return nil, fmt.Errorf("prometheus: %s %w", redact.URL(server), noredirect.Error(resp))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	var ans struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string          `json:"resultType"`
			Result     json.RawMessage `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return nil, fmt.Errorf("prometheus: %s answered %s: %.200s", redact.URL(server), resp.Status, body)
	}
	if ans.Status != "success" {
		return nil, fmt.Errorf("prometheus: %q: %s", query, ans.Error)
	}
	switch ans.Data.ResultType {
	case "vector":
		var vec []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		}
		if err := json.Unmarshal(ans.Data.Result, &vec); err != nil {
			return nil, fmt.Errorf("prometheus: %w", err)
		}
		out := make([]promSample, 0, len(vec))
		for _, v := range vec {
			f, err := promValue(v.Value[1])
			if err != nil {
				return nil, err
			}
			out = append(out, promSample{labels: v.Metric, value: f})
		}
		return out, nil
	case "scalar":
		var sc [2]any
		if err := json.Unmarshal(ans.Data.Result, &sc); err != nil {
			return nil, fmt.Errorf("prometheus: %w", err)
		}
		f, err := promValue(sc[1])
		if err != nil {
			return nil, err
		}
		return []promSample{{value: f}}, nil
	}
	return nil, fmt.Errorf("prometheus: %q answers a %s; want an instant vector or a scalar", query, ans.Data.ResultType)
}

func promValue(v any) (float64, error) {
	s, ok := v.(string)
	if !ok {
		return 0, fmt.Errorf("prometheus: a value %v is not a string", v)
	}
	return strconv.ParseFloat(s, 64)
}
