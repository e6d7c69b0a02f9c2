package postpolicy

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/cairn-store/cairn/internal/s3/sigv4"
)

// AWS's worked example of a SigV4 form ("Example: Browser-Based Upload using HTTP POST (Using
// AWS Signature Version 4)", S3 API reference): the policy exactly as base64 (its JSON has
// CRLF line ends), the example credentials and the signature AWS publishes for them.
const (
	awsV4AccessKey = "AKIAIOSFODNN7EXAMPLE"
	awsV4Secret    = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	awsV4Signature = "8afdbf4008c03f22c2cd3cdb72e4afbb1f6a588f3255ac628749a66d7f09699e"
	awsV4Policy    = "eyAiZXhwaXJhdGlvbiI6ICIyMDE1LTEyLTMwVDEyOjAwOjAwLjAwMFoiLA0KICAiY29uZGl0aW9ucyI6IFsNCiAgICB7ImJ1Y2tldCI6ICJzaWd2NGV4YW1wbGVidWNrZXQifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci91c2VyMS8iXSwNCiAgICB7ImFjbCI6ICJwdWJsaWMtcmVhZCJ9LA0KICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL3NpZ3Y0ZXhhbXBsZWJ1Y2tldC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwNCiAgICBbInN0YXJ0cy13aXRoIiwgIiRDb250ZW50LVR5cGUiLCAiaW1hZ2UvIl0sDQogICAgeyJ4LWFtei1tZXRhLXV1aWQiOiAiMTQzNjUxMjM2NTEyNzQifSwNCiAgICB7IngtYW16LXNlcnZlci1zaWRlLWVuY3J5cHRpb24iOiAiQUVTMjU2In0sDQogICAgWyJzdGFydHMtd2l0aCIsICIkeC1hbXotbWV0YS10YWciLCAiIl0sDQoNCiAgICB7IngtYW16LWNyZWRlbnRpYWwiOiAiQUtJQUlPU0ZPRE5ON0VYQU1QTEUvMjAxNTEyMjkvdXMtZWFzdC0xL3MzL2F3czRfcmVxdWVzdCJ9LA0KICAgIHsieC1hbXotYWxnb3JpdGhtIjogIkFXUzQtSE1BQy1TSEEyNTYifSwNCiAgICB7IngtYW16LWRhdGUiOiAiMjAxNTEyMjlUMDAwMDAwWiIgfQ0KICBdDQp9"
)

// AWS's example of a SigV2 form ("Browser-Based Uploads Using POST (AWS Signature Version
// 2)"): its base64 policy and published signature, for the secret key of AWS's V2 examples.
const (
	awsV2AccessKey = "AKIAIOSFODNN7EXAMPLE"
	awsV2Secret    = "uV3F3YluFJax1cknvbcGwgjvx4QpvB+leU8dUj2o"
	awsV2Signature = "0RavWzkygo6QX9caELEqKi9kDbU="
	awsV2Policy    = "eyAiZXhwaXJhdGlvbiI6ICIyMDA3LTEyLTAxVDEyOjAwOjAwLjAwMFoiLAogICJjb25kaXRpb25zIjogWwogICAgeyJidWNrZXQiOiAiam9obnNtaXRoIn0sCiAgICBbInN0YXJ0cy13aXRoIiwgIiRrZXkiLCAidXNlci9lcmljLyJdLAogICAgeyJhY2wiOiAicHVibGljLXJlYWQifSwKICAgIHsic3VjY2Vzc19hY3Rpb25fcmVkaXJlY3QiOiAiaHR0cDovL2pvaG5zbWl0aC5zMy5hbWF6b25hd3MuY29tL3N1Y2Nlc3NmdWxfdXBsb2FkLmh0bWwifSwKICAgIFsic3RhcnRzLXdpdGgiLCAiJENvbnRlbnQtVHlwZSIsICJpbWFnZS8iXSwKICAgIHsieC1hbXotbWV0YS11dWlkIjogIjE0MzY1MTIzNjUxMjc0In0sCiAgICBbInN0YXJ0cy13aXRoIiwgIiR4LWFtei1tZXRhLXRhZyIsICIiXQogIF0KfQo="
)

func TestSignaturesMatchAWSExamples(t *testing.T) {
	if got := SignV4(awsV4Secret, "20151229", "us-east-1", awsV4Policy); got != awsV4Signature {
		t.Errorf("SignV4 of AWS's example: %s, want %s", got, awsV4Signature)
	}
	if got := SignV2(awsV2Secret, awsV2Policy); got != awsV2Signature {
		t.Errorf("SignV2 of AWS's example: %s, want %s", got, awsV2Signature)
	}
}

// awsV4Fields is AWS's example form as ReadForm hands it on: names lower-cased, ${filename}
// replaced, the request's bucket added.
func awsV4Fields() Fields {
	return Fields{
		"bucket": "sigv4examplebucket", "key": "user/user1/MyPhoto.jpg", "acl": "public-read",
		"success_action_redirect": "http://sigv4examplebucket.s3.amazonaws.com/successful_upload.html",
		"content-type":            "image/jpeg", "x-amz-meta-uuid": "14365123651274",
		"x-amz-server-side-encryption": "AES256", "x-amz-meta-tag": "",
		"x-amz-credential": awsV4AccessKey + "/20151229/us-east-1/s3/aws4_request",
		"x-amz-algorithm":  "AWS4-HMAC-SHA256", "x-amz-date": "20151229T000000Z",
		"policy": awsV4Policy, "x-amz-signature": awsV4Signature,
	}
}

func awsV2Fields() Fields {
	return Fields{
		"bucket": "johnsmith", "key": "user/eric/MyPicture.jpg", "acl": "public-read",
		"success_action_redirect": "http://johnsmith.s3.amazonaws.com/successful_upload.html",
		"content-type":            "image/jpeg", "x-amz-meta-uuid": "14365123651274", "x-amz-meta-tag": "Some,Tag,For,Picture",
		"awsaccesskeyid": awsV2AccessKey, "policy": awsV2Policy, "signature": awsV2Signature,
	}
}

var exampleStore = sigv4.StaticStore{
	awsV4AccessKey: {AccessKey: awsV4AccessKey, SecretKey: awsV4Secret, Account: "v4"},
	"V2KEY":        {AccessKey: "V2KEY", SecretKey: awsV2Secret, Account: "v2"},
}

// TestAuthenticateAWSExamples verifies and checks AWS's two example forms whole, as the
// handler does: signature, policy decoding, then every condition and field.
func TestAuthenticateAWSExamples(t *testing.T) {
	ctx := context.Background()
	s, err := Authenticate(ctx, awsV4Fields(), exampleStore, "us-east-1")
	if err != nil {
		t.Fatalf("AWS's SigV4 example: %v", err)
	}
	if s.Credential.Account != "v4" || s.SignatureV2 {
		t.Errorf("SigV4 example authenticated as %+v", s)
	}
	if want := time.Date(2015, 12, 30, 12, 0, 0, 0, time.UTC); !s.Policy.Expiration.Equal(want) {
		t.Errorf("expiration %v, want %v", s.Policy.Expiration, want)
	}
	if err := s.Policy.Check(awsV4Fields(), time.Date(2015, 12, 29, 0, 0, 1, 0, time.UTC)); err != nil {
		t.Errorf("AWS's SigV4 example form against its policy: %v", err)
	}

	v2 := awsV2Fields()
	v2["awsaccesskeyid"] = "V2KEY"
	s, err = Authenticate(ctx, v2, exampleStore, "us-east-1")
	if err != nil {
		t.Fatalf("AWS's SigV2 example: %v", err)
	}
	if s.Credential.Account != "v2" || !s.SignatureV2 {
		t.Errorf("SigV2 example authenticated as %+v", s)
	}
	if err := s.Policy.Check(v2, time.Date(2007, 11, 30, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Errorf("AWS's SigV2 example form against its policy: %v", err)
	}
}

func TestAuthenticateRefusals(t *testing.T) {
	mod := func(f Fields, change func(Fields)) Fields {
		f = maps.Clone(f)
		change(f)
		return f
	}
	v4 := awsV4Fields()
	v2 := mod(awsV2Fields(), func(f Fields) { f["awsaccesskeyid"] = "V2KEY" })
	tests := []struct {
		name   string
		fields Fields
		region string
		want   error
	}{
		{"v4 signature tampered", mod(v4, func(f Fields) { f["x-amz-signature"] = "0" + awsV4Signature[1:] }), "", sigv4.ErrSignatureDoesNotMatch},
		{"v4 policy tampered", mod(v4, func(f Fields) { f["policy"] = b64(`{"expiration":"2999-01-01T00:00:00Z","conditions":[]}`) }), "", sigv4.ErrSignatureDoesNotMatch},
		{"v4 signed for another day", mod(v4, func(f Fields) { f["x-amz-credential"] = awsV4AccessKey + "/20151230/us-east-1/s3/aws4_request" }), "", sigv4.ErrSignatureDoesNotMatch},
		{"v4 unknown key", mod(v4, func(f Fields) { f["x-amz-credential"] = "NOSUCHKEY/20151229/us-east-1/s3/aws4_request" }), "", sigv4.ErrInvalidAccessKeyID},
		{"v4 without policy", mod(v4, func(f Fields) { delete(f, "policy") }), "", ErrInvalidArgument},
		{"v4 without signature", mod(v4, func(f Fields) { delete(f, "x-amz-signature") }), "", ErrInvalidArgument},
		{"v4 without date", mod(v4, func(f Fields) { delete(f, "x-amz-date") }), "", ErrInvalidArgument},
		{"v4 bad date", mod(v4, func(f Fields) { f["x-amz-date"] = "2015-12-29" }), "", ErrInvalidArgument},
		{"v4 other algorithm", mod(v4, func(f Fields) { f["x-amz-algorithm"] = "AWS4-HMAC-SHA1" }), "", ErrInvalidArgument},
		{"v4 credential of another service", mod(v4, func(f Fields) { f["x-amz-credential"] = awsV4AccessKey + "/20151229/us-east-1/iam/aws4_request" }), "", ErrInvalidArgument},
		{"v4 credential malformed", mod(v4, func(f Fields) { f["x-amz-credential"] = awsV4AccessKey }), "", ErrInvalidArgument},
		{"v4 region not served", v4, "eu-west-1", ErrInvalidArgument},
		{"v2 signature tampered", mod(v2, func(f Fields) { f["signature"] = "1" + awsV2Signature[1:] }), "", sigv4.ErrSignatureDoesNotMatch},
		{"v2 unknown key", mod(v2, func(f Fields) { f["awsaccesskeyid"] = "NOSUCHKEY" }), "", sigv4.ErrInvalidAccessKeyID},
		{"v2 without signature", mod(v2, func(f Fields) { delete(f, "signature") }), "", ErrInvalidArgument},
		{"v2 without policy", mod(v2, func(f Fields) { delete(f, "policy") }), "", ErrInvalidArgument},
		{"policy without any credentials", Fields{"key": "k", "policy": awsV2Policy}, "", ErrInvalidArgument},
		{"signed policy that does not decode", signedV2(t, "V2KEY", awsV2Secret, b64(`{"conditions":[]}`)), "", ErrInvalidPolicyDocument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Authenticate(context.Background(), tc.fields, exampleStore, tc.region)
			if !errors.Is(err, tc.want) || s != nil {
				t.Fatalf("Authenticate: %+v, %v; want %v", s, err, tc.want)
			}
		})
	}
}

func signedV2(t *testing.T, ak, secret, policy string) Fields {
	t.Helper()
	return Fields{"key": "k", "awsaccesskeyid": ak, "policy": policy, "signature": SignV2(secret, policy)}
}

func TestAuthenticateAnonymous(t *testing.T) {
	s, err := Authenticate(context.Background(), Fields{"key": "k", "acl": "public-read", "bucket": "b"}, exampleStore, "")
	if s != nil || err != nil {
		t.Fatalf("a form without credentials or policy: %+v, %v; want anonymous (nil, nil)", s, err)
	}
}
