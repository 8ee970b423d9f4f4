//! The rustls configuration for TLS to Kafka brokers: the system's roots, the built-in
//! Mozilla roots and `caFile`; a client certificate for mutual TLS; or no checks at all.

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};

use super::KafkaTls;

pub(super) fn client_config(t: &KafkaTls) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = if t.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoChecks(provider)))
    } else {
        let mut roots = RootCertStore::empty();
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        if let Some(pem) = &t.ca_pem {
            for cert in CertificateDer::pem_slice_iter(pem) {
                let cert = cert.map_err(|e| format!("TLS: caFile: {e}"))?;
                roots.add(cert).map_err(|e| format!("TLS: caFile: {e}"))?;
            }
        }
        builder.with_root_certificates(roots)
    };
    let config = match &t.identity_pem {
        None => builder.with_no_client_auth(),
        Some((certs, key)) => {
            let chain = CertificateDer::pem_slice_iter(certs)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("TLS: certFile: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(key.expose().as_bytes())
                .map_err(|_| "TLS: keyFile holds no usable PEM private key".to_string())?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| format!("TLS: client certificate: {e}"))?
        }
    };
    Ok(Arc::new(config))
}

/// `insecureSkipVerify`: any certificate is accepted (signatures are still checked).
#[derive(Debug)]
struct NoChecks(Arc<rustls::crypto::CryptoProvider>);

impl ServerCertVerifier for NoChecks {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
