package storage

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// partSize bounds the memory a streaming upload buffers: with an unknown size
// the client uploads in parts of this size (multipart), and S3 makes the
// object visible only when the upload is completed, never a partial one.
const partSize = 16 << 20

// S3Config addresses an S3-compatible bucket.
type S3Config struct {
	Endpoint string // host:port, no scheme
	Bucket   string
	Region   string
	Insecure bool // plain HTTP instead of TLS
	// Transport overrides the HTTP transport (e.g. to trust a private CA);
	// nil uses the default.
	Transport http.RoundTripper
}

// S3 stores objects in an S3-compatible bucket with path-style addressing
// (what MinIO, Ceph RGW and versitygw serve without DNS wildcards).
// Credentials come from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (and
// AWS_SESSION_TOKEN), which the Job gets from the credentials Secret.
type S3 struct {
	client *minio.Client
	bucket string
}

// NewS3 returns an S3 storage; it does not contact the endpoint.
func NewS3(cfg S3Config) (*S3, error) {
	c, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:        credentials.NewEnvAWS(),
		Secure:       !cfg.Insecure,
		Region:       cfg.Region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("s3 storage: %w", err)
	}
	return &S3{client: c, bucket: cfg.Bucket}, nil
}

// Put implements Storage.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	if err := CheckKey(key); err != nil {
		return 0, err
	}
	info, err := s.client.PutObject(ctx, s.bucket, key, r, -1, minio.PutObjectOptions{
		PartSize:    partSize,
		ContentType: "application/octet-stream",
	})
	if err != nil {
		return 0, fmt.Errorf("s3 put %s: %w", key, err)
	}
	return info.Size, nil
}

// Get implements Storage. The object is stat'ed first so a missing key is
// reported here rather than on the first Read.
func (s *S3) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := CheckKey(key); err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("s3 get %s: %w", key, err)
	}
	if _, err := obj.Stat(); err != nil {
		obj.Close()
		if minio.ToErrorResponse(err).Code == minio.NoSuchKey {
			return nil, fmt.Errorf("%s: %w", key, ErrNotFound)
		}
		return nil, fmt.Errorf("s3 get %s: %w", key, err)
	}
	return obj, nil
}

// List implements Storage.
func (s *S3) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, fmt.Errorf("s3 list %s: %w", prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	slices.Sort(keys)
	return keys, nil
}

// Delete implements Storage.
func (s *S3) Delete(ctx context.Context, key string) error {
	if err := CheckKey(key); err != nil {
		return err
	}
	if err := s.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{}); err != nil {
		return fmt.Errorf("s3 delete %s: %w", key, err)
	}
	return nil
}

// EnsureBucket creates the bucket if it does not exist (tests and first use).
func (s *S3) EnsureBucket(ctx context.Context, region string) error {
	ok, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("s3 bucket %s: %w", s.bucket, err)
	}
	if ok {
		return nil
	}
	return s.client.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{Region: region})
}
