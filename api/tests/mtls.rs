//! mTLS (`[api] client_ca_file`, `client_principals`) on a real https listener over a real site
//! database: a client certificate signed by the site's client CA, whose common name maps to a
//! token, authenticates as that token (role, audit name, revocation); a certificate whose name is
//! not mapped is refused (401); one signed by another CA fails the handshake; a client without a
//! certificate still authenticates with its bearer token.

use std::sync::Arc;

use hostfw_api::ApiServer;
use hostfw_fixtures::SiteToml;
use hostfw_model::Role;
use hostfw_store::{NewToken, Store};
use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose};
use reqwest::StatusCode;

struct Ca {
    cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::DigitalSignature];
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A leaf signed by this CA, as (certificate PEM, key PEM).
    fn leaf(&self, common_name: &str, names: &[&str], purpose: ExtendedKeyUsagePurpose) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        params.distinguished_name.push(DnType::CommonName, common_name);
        params.is_ca = IsCa::ExplicitNoCa;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![purpose];
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

struct Site {
    _dir: tempfile::TempDir,
    api: ApiServer,
    store: Store,
    ca_pem: String,
}

/// An https API whose client CA is `clients`, mapping CN `provisioning` to a fresh operator
/// token and CN `ghost` to a token id that does not exist. Returns the site and the operator
/// token's id and secret.
async fn site(clients: &Ca) -> (Site, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let server_ca = Ca::new("hostfw test server CA");
    let (cert, key) = server_ca.leaf("hostfw-api", &["127.0.0.1", "localhost"], ExtendedKeyUsagePurpose::ServerAuth);
    std::fs::write(dir.path().join("api.crt"), cert).unwrap();
    std::fs::write(dir.path().join("api.key"), key).unwrap();
    std::fs::write(dir.path().join("clients-ca.crt"), clients.cert.pem()).unwrap();
    // The token exists before the config names it: create it on a store of the same database.
    let db = format!("sqlite://{}", dir.path().join("site.db").display());
    let bootstrap = SiteToml::named("mtls").database_url(&db);
    let (_, bootstrap_config) = bootstrap.write(dir.path()).unwrap();
    let store = Store::open_site(&bootstrap_config).await.unwrap();
    let new = NewToken { name: "provisioning".into(), role: Role::Operator, instances: vec![], expires_at_ms: None };
    let (token, secret) = store.token_create(&new, "test setup").await.unwrap();
    let (_, config) = bootstrap
        .set("api", "listen", "127.0.0.1:0")
        .set("api", "tls_cert_file", "api.crt")
        .set("api", "tls_key_file", "api.key")
        .set("api", "client_ca_file", "clients-ca.crt")
        .set("api.client_principals", "provisioning", token.id.as_str())
        .set("api.client_principals", "ghost", "tnothere")
        .temporal_port(1)
        .write(dir.path())
        .unwrap();
    let api = ApiServer::start(Arc::new(config), store.clone()).await.unwrap();
    (Site { _dir: dir, api, store, ca_pem: server_ca.cert.pem() }, token.id, secret)
}

impl Site {
    fn client(&self, identity: Option<(&str, &str)>) -> reqwest::Client {
        let mut builder = reqwest::Client::builder()
            .use_rustls_tls()
            .add_root_certificate(reqwest::Certificate::from_pem(self.ca_pem.as_bytes()).unwrap());
        if let Some((cert, key)) = identity {
            builder = builder.identity(reqwest::Identity::from_pem(format!("{cert}{key}").as_bytes()).unwrap());
        }
        builder.build().unwrap()
    }

    async fn whoami(&self, client: &reqwest::Client, bearer: Option<&str>) -> reqwest::Result<(StatusCode, String)> {
        let mut request = client.get(format!("https://127.0.0.1:{}/v1/whoami", self.api.addr.port()));
        if let Some(token) = bearer {
            request = request.bearer_auth(token);
        }
        let response = request.send().await?;
        Ok((response.status(), response.text().await.unwrap()))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_certificate_mapped_to_a_token_authenticates_as_that_token() {
    let clients = Ca::new("hostfw test client CA");
    let (site, token_id, secret) = site(&clients).await;
    let mapped = clients.leaf("provisioning", &[], ExtendedKeyUsagePurpose::ClientAuth);

    let (status, body) = site.whoami(&site.client(Some((&mapped.0, &mapped.1))), None).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.contains(&token_id) && body.contains("operator"), "the token's principal: {body}");

    // A certificate of the right CA whose name is not mapped, or maps to no token: 401.
    let unmapped = clients.leaf("someone-else", &[], ExtendedKeyUsagePurpose::ClientAuth);
    let (status, body) = site.whoami(&site.client(Some((&unmapped.0, &unmapped.1))), None).await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("CN=someone-else is not in api.client_principals"), "{body}");
    let ghost = clients.leaf("ghost", &[], ExtendedKeyUsagePurpose::ClientAuth);
    let (status, body) = site.whoami(&site.client(Some((&ghost.0, &ghost.1))), None).await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("tnothere, which does not exist"), "{body}");

    // A certificate signed by another CA: the handshake itself is refused.
    let stranger = Ca::new("someone else's CA").leaf("provisioning", &[], ExtendedKeyUsagePurpose::ClientAuth);
    let refused = site.whoami(&site.client(Some((&stranger.0, &stranger.1))), None).await;
    assert!(refused.is_err(), "a certificate of another CA was accepted: {refused:?}");

    // No certificate: the bearer token still works, and nothing without one.
    let plain = site.client(None);
    let (status, body) = site.whoami(&plain, Some(&secret)).await.unwrap();
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _) = site.whoami(&plain, None).await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // The CLI presents the same certificate (`--client-cert`, certificate and key in one file)
    // and needs no token.
    let dir = tempfile::tempdir().unwrap();
    let pem = dir.path().join("client.pem");
    std::fs::write(&pem, format!("{}{}", mapped.0, mapped.1)).unwrap();
    let ca = dir.path().join("server-ca.pem");
    std::fs::write(&ca, &site.ca_pem).unwrap();
    let url = format!("https://127.0.0.1:{}", site.api.addr.port());
    let argv =
        ["hostfw", "-a", &url, "--ca-file", ca.to_str().unwrap(), "--client-cert", pem.to_str().unwrap(), "whoami"];
    let cli = <hostfw_starter::cli::Cli as clap::Parser>::try_parse_from(argv).unwrap();
    let (result, printed) = hostfw_starter::output::capture(hostfw_starter::run(cli)).await;
    result.unwrap_or_else(|e| panic!("whoami with a client certificate: {e:#}\n{printed}"));
    assert!(printed.contains(&token_id) && printed.contains("operator"), "{printed}");

    // Revoking the token revokes the certificate's access.
    site.store.token_revoke(&token_id, "test").await.unwrap();
    let (status, body) = site.whoami(&site.client(Some((&mapped.0, &mapped.1))), None).await.unwrap();
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("was revoked"), "{body}");
}
