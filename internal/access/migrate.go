package access

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Migrating a bucket ACL stored with the old meaning (MetaLegacyACL: a bucket READ also read
// every object) to S3's meaning (MetaACL: a bucket READ lists). The access a bucket gave must be
// the same after as before, for everyone: the ACL moves as it is, and the object reads its READ
// grants gave move into the bucket policy, in statements that name the same grantees. Where
// that cannot be said exactly, the bucket is left as it is and the migration says why.

// MigratedSidPrefix starts the Sid of every policy statement a migration adds.
const MigratedSidPrefix = "CairnBucketReadBefore2026"

// ACLMigration is what MigrateLegacyACL found for one bucket.
type ACLMigration struct {
	// Changes is the container metadata update that migrates the bucket; nil when there is
	// nothing to migrate or it cannot be migrated (Refused says why).
	Changes map[string]string
	// Readers are the grantees whose object reads moved into the policy: "AllUsers",
	// "AuthenticatedUsers" or an account name.
	Readers []string
	// Refused is why the bucket is left with its old ACL; empty when it migrates.
	Refused string
}

// MigrateLegacyACL works out the migration of a bucket's stored state (its container metadata).
// It does no I/O: the caller writes Changes with one container metadata update.
func MigrateLegacyACL(bucket string, m map[string]string) ACLMigration {
	st := StateFromMeta(bucket, m)
	if !st.LegacyBucketRead {
		return ACLMigration{}
	}
	if st.Broken != nil {
		return ACLMigration{Refused: "its access state does not parse: " + st.Broken.Error()}
	}
	changes := BucketACLChanges(st.ACL)
	if !st.ACLsEnabled() {
		// BucketOwnerEnforced: the ACL granted nothing, and grants nothing after either.
		return ACLMigration{Changes: changes}
	}
	pab := st.pab()
	var readers []Grantee
	for _, g := range st.ACL.Grants {
		if g.Permission != Read && g.Permission != FullControl {
			continue
		}
		if pab.IgnorePublicAcls && g.Grantee.public() {
			continue // it granted nothing
		}
		if !slices.Contains(readers, g.Grantee) {
			readers = append(readers, g.Grantee)
		}
	}
	if len(readers) == 0 {
		return ACLMigration{Changes: changes}
	}
	var statements []map[string]any
	var accounts, names []string
	for _, g := range readers {
		switch {
		case g.URI == AllUsersURI:
			names = append(names, "AllUsers")
			statements = append(statements, readStatement("AllUsers", "*", bucket, nil))
		case g.URI == AuthenticatedUsersURI:
			names = append(names, "AuthenticatedUsers")
			// Every authenticated caller, of any account: one whose account is known.
			statements = append(statements, readStatement("AuthenticatedUsers", "*", bucket,
				map[string]any{"Null": map[string]any{"aws:PrincipalAccount": "false"}}))
		default:
			accounts = append(accounts, g.ID)
		}
	}
	if len(accounts) > 0 {
		names = append(names, accounts...)
		var principal any = map[string]any{"AWS": accounts}
		statements = append(statements, readStatement("Accounts", principal, bucket, nil))
	}
	if pab.RestrictPublicBuckets && (slices.Contains(names, "AllUsers") || slices.Contains(names, "AuthenticatedUsers")) {
		// The block would keep a public statement for the owner's account, where the ACL's
		// public grant let everyone read.
		return ACLMigration{Refused: "its public READ grant reads objects, which a public policy statement would not under its RestrictPublicBuckets"}
	}
	doc, err := mergeStatements(st.Policy, statements)
	if err != nil {
		return ACLMigration{Refused: err.Error()}
	}
	if _, err := ParsePolicy(doc, bucket); err != nil {
		return ACLMigration{Refused: "the bucket policy with the object reads added would not be valid: " + err.Error()}
	}
	changes = maps.Clone(changes)
	changes[MetaPolicy] = string(doc)
	return ACLMigration{Changes: changes, Readers: names}
}

func readStatement(name string, principal any, bucket string, condition map[string]any) map[string]any {
	s := map[string]any{
		"Sid":       MigratedSidPrefix + name,
		"Effect":    "Allow",
		"Principal": principal,
		"Action":    "s3:GetObject",
		"Resource":  arnPrefix + bucket + "/*",
	}
	if condition != nil {
		s["Condition"] = condition
	}
	return s
}

// mergeStatements adds statements to a bucket's policy document (nil: none yet), keeping what
// is there as it is.
func mergeStatements(p *Policy, statements []map[string]any) ([]byte, error) {
	top := map[string]json.RawMessage{}
	var existing []json.RawMessage
	if p != nil {
		if err := json.Unmarshal([]byte(p.Raw), &top); err != nil {
			return nil, fmt.Errorf("the bucket policy does not parse: %v", err)
		}
		if raw, ok := top["Statement"]; ok {
			if strings.HasPrefix(strings.TrimSpace(string(raw)), "[") {
				if err := json.Unmarshal(raw, &existing); err != nil {
					return nil, fmt.Errorf("the bucket policy's statements do not parse: %v", err)
				}
			} else {
				existing = []json.RawMessage{raw}
			}
		}
		for _, s := range p.Statements {
			if strings.HasPrefix(s.Sid, MigratedSidPrefix) {
				return nil, fmt.Errorf("the bucket policy already has a statement %q", s.Sid)
			}
		}
	} else {
		top["Version"] = json.RawMessage(`"2012-10-17"`)
	}
	for _, s := range statements {
		b, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		existing = append(existing, b)
	}
	b, err := json.Marshal(existing)
	if err != nil {
		return nil, err
	}
	top["Statement"] = b
	return json.Marshal(top)
}
