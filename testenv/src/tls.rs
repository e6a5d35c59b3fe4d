//! Certificates for servers the test API server calls on loopback
//! (webhooks): a CA and a serving certificate for 127.0.0.1, made with
//! openssl.

use std::path::Path;

use anyhow::{Context, Result};

/// A fresh CA and a serving certificate for `IP:127.0.0.1`, written into
/// `dir`: `(ca.pem, tls.crt, tls.key)` as PEM. Valid for a day.
pub fn loopback_certificates(dir: &Path) -> Result<(Vec<u8>, Vec<u8>, Vec<u8>)> {
    let openssl = |args: &[&str]| crate::openssl(dir, args);
    std::fs::write(dir.join("ext.cnf"), "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")?;
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=kube-codegen-test-ca"],
        ]
        .concat(),
    )?;
    openssl(&[&["req"][..], &ec, &["-keyout", "tls.key", "-out", "tls.csr", "-subj", "/CN=127.0.0.1"]].concat())?;
    openssl(&[
        "x509",
        "-req",
        "-in",
        "tls.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "tls.crt",
        "-days",
        "1",
        "-extfile",
        "ext.cnf",
    ])?;
    let read = |f: &str| std::fs::read(dir.join(f)).with_context(|| format!("reading {f}"));
    Ok((read("ca.pem")?, read("tls.crt")?, read("tls.key")?))
}
