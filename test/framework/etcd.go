package framework

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
)

// StoredAPIVersion reads the custom resource group/resource namespace/name
// straight from etcd, through etcd's JSON gateway, and returns the
// apiVersion it is encoded in there: the only way to see which version the
// apiserver stored, since every API read converts.
func (c *Cluster) StoredAPIVersion(ctx context.Context, group, resource, namespace, name string) (string, error) {
	key := fmt.Sprintf("/registry/%s/%s/%s/%s", group, resource, namespace, name)
	body, _ := json.Marshal(map[string]string{"key": base64.StdEncoding.EncodeToString([]byte(key))})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.EtcdURL+"/v3/kv/range", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading %s from etcd: %w", key, err)
	}
	defer resp.Body.Close()
	var out struct {
		KVs []struct {
			Value []byte `json:"value"` // base64 in JSON, decoded by encoding/json
		} `json:"kvs"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("reading %s from etcd: %s: %w", key, resp.Status, err)
	}
	if len(out.KVs) != 1 {
		return "", fmt.Errorf("etcd has no key %s", key)
	}
	var obj struct {
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(out.KVs[0].Value, &obj); err != nil {
		return "", fmt.Errorf("%s in etcd is not JSON: %w", key, err)
	}
	return obj.APIVersion, nil
}
