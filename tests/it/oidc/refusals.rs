//! Every way a sign-in through the provider lets nobody in, one by one, each with
//! nothing written (no person, no binding, no membership, no session): ID tokens that
//! are not this sign-in's, keys the provider never published, a provider that does not
//! answer (and the recovery when it does), and the invitation rules.

use std::sync::atomic::Ordering;

use http::{Method, StatusCode};
use jsonwebtoken::{Algorithm, EncodingKey};
use serde_json::{json, Value};

use super::*;

/// A fresh authorization request of a registered client: its path.
async fn authorization(h: &Harness) -> String {
    let client = register(h, &[CALLBACK]).await;
    let (_, challenge) = pkce();
    format!("/authorize?{}", authorize_query(&client, CALLBACK, &challenge, &[]))
}

/// `person` answers a fresh sign-in with `edit` applied to the token's claims, signed by
/// `signer`: the callback's reply.
async fn answered(
    h: &Harness,
    provider: &Provider,
    person: &Person,
    edit: impl FnOnce(&mut Value),
    signer: Signer,
) -> Reply {
    let path = authorization(h).await;
    let (params, cookie) = begin(h, provider, &path).await;
    let mut claims = claims(provider, person, &params);
    edit(&mut claims);
    callback(h, provider, &params, &cookie, claims, signer).await
}

/// A refused sign-in: a page with `words`, no session, nothing written.
async fn refused(h: &Harness, reply: &Reply, before: (i64, i64, i64), status: u16, words: &str) {
    assert_eq!(reply.status.as_u16(), status, "{}", text(reply));
    assert!(reply.header("content-type").unwrap().starts_with("text/html"));
    assert!(text(reply).contains(words), "{words:?} in {}", text(reply));
    assert!(set_cookie(reply, "kfin_session").is_none(), "no session");
    assert_eq!(written(h).await, before, "nothing written");
}

#[tokio::test]
async fn an_id_token_that_is_not_this_sign_ins_lets_nobody_in() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    workspace(&h, "Gama", "dona@gama.com.br").await;
    let dona = Person::new("sub-dona", "dona@gama.com.br");
    let before = written(&h).await;
    let now = kobana_finance_mcp::clock::now_unix();
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("another audience", Box::new(|c| c["aud"] = json!("another-client"))),
        ("another issuer", Box::new(|c| c["iss"] = json!("https://idp.example.com"))),
        ("another sign-in's nonce", Box::new(|c| c["nonce"] = json!("a-nonce-of-another-sign-in"))),
        ("expired", Box::new(move |c| c["exp"] = json!(now - 300))),
        ("no nonce", Box::new(|c| drop(c.as_object_mut().unwrap().remove("nonce")))),
    ];
    for (case, edit) in cases {
        let reply = answered(&h, &provider, &dona, edit, Signer::rsa()).await;
        assert_eq!(reply.status, 403, "{case}");
        refused(&h, &reply, before, 403, "Não foi possível verificar a resposta do provedor").await;
    }
    // HS256 keyed with the provider's public key (the algorithm confusion attack).
    let public =
        serde_json::to_vec(&Jwk::from_encoding_key(&EncodingKey::from_rsa_der(RSA), Algorithm::RS256).unwrap())
            .unwrap();
    let hs = Signer { alg: Algorithm::HS256, kid: Some("r1".into()), key: EncodingKey::from_secret(&public).unwrap() };
    refused(
        &h,
        &answered(&h, &provider, &dona, |_| {}, hs).await,
        before,
        403,
        "Não foi possível verificar a resposta do provedor",
    )
    .await;
    // A published key id on another key's signature.
    let forged = Signer { alg: Algorithm::RS256, kid: Some("r1".into()), key: EncodingKey::from_rsa_der(OTHER) };
    refused(
        &h,
        &answered(&h, &provider, &dona, |_| {}, forged).await,
        before,
        403,
        "Não foi possível verificar a resposta do provedor",
    )
    .await;
    // ES256 with the RSA key's id.
    let mixed = Signer { alg: Algorithm::ES256, kid: Some("r1".into()), key: EncodingKey::from_ec_der(EC) };
    refused(
        &h,
        &answered(&h, &provider, &dona, |_| {}, mixed).await,
        before,
        403,
        "Não foi possível verificar a resposta do provedor",
    )
    .await;
    // And the same person, with a token that is hers, gets in.
    let ok = answered(&h, &provider, &dona, |_| {}, Signer::rsa()).await;
    assert_eq!(ok.status, StatusCode::FOUND, "{}", text(&ok));
    assert!(set_cookie(&ok, "kfin_session").is_some());
}

#[tokio::test]
async fn an_unsigned_token_is_refused() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    workspace(&h, "Gama", "dona@gama.com.br").await;
    let before = written(&h).await;
    let dona = Person::new("sub-dona", "dona@gama.com.br");
    let none = Signer { alg: Algorithm::RS256, kid: Some("r1".into()), key: EncodingKey::from_rsa_der(RSA) };
    let path = authorization(&h).await;
    let (params, cookie) = begin(&h, &provider, &path).await;
    // The provider answers `alg: none`: header and claims, no signature.
    use base64::Engine;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let unsigned = format!(
        "{}.{}.",
        b64.encode(br#"{"alg":"none","kid":"r1"}"#),
        b64.encode(claims(&provider, &dona, &params).to_string())
    );
    let reply = callback_with_token(&h, &provider, &params, &cookie, unsigned, none).await;
    refused(&h, &reply, before, 403, "Não foi possível verificar a resposta do provedor").await;
}

/// As `callback`, the provider answering exactly `id_token`.
async fn callback_with_token(
    h: &Harness,
    provider: &Provider,
    params: &[(String, String)],
    cookie: &str,
    id_token: String,
    signer: Signer,
) -> Reply {
    provider.answer_exactly(id_token);
    callback(h, provider, params, cookie, json!({}), signer).await
}

#[tokio::test]
async fn a_key_the_provider_never_published_is_refused_after_one_fetch_of_its_keys_and_a_rotated_one_accepted() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    workspace(&h, "Gama", "dona@gama.com.br").await;
    let dona = Person::new("sub-dona", "dona@gama.com.br");
    let before = written(&h).await;
    let unknown = Signer { alg: Algorithm::RS256, kid: Some("r9".into()), key: EncodingKey::from_rsa_der(OTHER) };
    let reply = answered(&h, &provider, &dona, |_| {}, unknown.clone()).await;
    refused(&h, &reply, before, 403, "Não foi possível verificar a resposta do provedor").await;
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 2, "the keys kept, then fetched once more");
    // The provider rotates: the new key is found by one fetch, then kept.
    provider.publish(super::published(&EncodingKey::from_rsa_der(OTHER), Algorithm::RS256, "r9"));
    let reply = answered(&h, &provider, &dona, |_| {}, unknown.clone()).await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 3);
    let again = answered(&h, &provider, &dona, |_| {}, unknown).await;
    assert_eq!(again.status, StatusCode::FOUND);
    assert_eq!(provider.key_fetches.load(Ordering::SeqCst), 3, "kept");
}

#[tokio::test]
async fn a_provider_that_does_not_answer_is_a_clear_page_and_the_sign_in_works_again_when_it_does() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    workspace(&h, "Gama", "dona@gama.com.br").await;
    let before = written(&h).await;
    provider.down.store(true, Ordering::SeqCst);
    let path = authorization(&h).await;
    let reply = h.send(to(Method::GET, &path).build()).await;
    refused(&h, &reply, before, 503, "não responde").await;
    let english = h.send(to(Method::GET, &path).header("accept-language", "en").build()).await;
    assert_eq!(english.status, 503);
    assert!(text(&english).contains("does not answer right now; try again in a minute"), "{}", text(&english));
    // Down between the redirect and the code's exchange: the same page.
    provider.down.store(false, Ordering::SeqCst);
    let (params, cookie) = begin(&h, &provider, &path).await;
    provider.down.store(true, Ordering::SeqCst);
    let dona = Person::new("sub-dona", "dona@gama.com.br");
    let reply = callback(&h, &provider, &params, &cookie, claims(&provider, &dona, &params), Signer::rsa()).await;
    refused(&h, &reply, before, 503, "não responde").await;
    // Back: nothing of the failures was kept.
    provider.down.store(false, Ordering::SeqCst);
    let reply = answered(&h, &provider, &dona, |_| {}, Signer::rsa()).await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
}

#[tokio::test]
async fn a_callback_in_another_browser_or_twice_or_with_the_providers_refusal_lets_nobody_in() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    workspace(&h, "Gama", "dona@gama.com.br").await;
    let dona = Person::new("sub-dona", "dona@gama.com.br");
    let before = written(&h).await;
    let path = authorization(&h).await;
    let (params, cookie) = begin(&h, &provider, &path).await;
    let claims_of = |params: &[(String, String)]| claims(&provider, &dona, params);
    let other_browser =
        callback(&h, &provider, &params, "kfin_sign_in=another-browsers-state", claims_of(&params), Signer::rsa())
            .await;
    refused(&h, &other_browser, before, 400, "não foi começado neste navegador").await;
    let no_cookie = callback(&h, &provider, &params, "", claims_of(&params), Signer::rsa()).await;
    refused(&h, &no_cookie, before, 400, "não foi começado neste navegador").await;
    let english =
        h.send(to(Method::GET, "/oauth/callback?state=x&code=y").header("accept-language", "en").build()).await;
    refused(&h, &english, before, 400, "not started in this browser: start the sign-in again from the app").await;
    let first = callback(&h, &provider, &params, &cookie, claims_of(&params), Signer::rsa()).await;
    assert_eq!(first.status, StatusCode::FOUND);
    let before = written(&h).await;
    let twice = callback(&h, &provider, &params, &cookie, claims_of(&params), Signer::rsa()).await;
    refused(&h, &twice, before, 400, "expirou ou já foi respondido").await;
    // The person said no at the provider.
    let (params, cookie) = begin(&h, &provider, &path).await;
    let state = value_of(&params, "state").unwrap();
    let query = format!(
        "/oauth/callback?error=access_denied&state={}",
        url::form_urlencoded::byte_serialize(state.as_bytes()).collect::<String>()
    );
    let denied = h.send(to(Method::GET, &query).header("cookie", &cookie).build()).await;
    refused(&h, &denied, before, 403, "não fez o seu acesso (access_denied)").await;
}

#[tokio::test]
async fn only_an_invitation_of_a_verified_address_lets_a_new_person_in_once() {
    let provider = Provider::start().await;
    let h = harness(&provider).await;
    let gama = workspace(&h, "Gama", "dona@gama.com.br").await;
    let before = written(&h).await;
    // The provider did not verify the address.
    let mut unverified = Person::new("sub-dona", "dona@gama.com.br");
    unverified.verified = false;
    let reply = answered(&h, &provider, &unverified, |_| {}, Signer::rsa()).await;
    refused(&h, &reply, before, 403, "não confirmou").await;
    let reply = answered(&h, &provider, &unverified, |c| c["email_verified"] = json!("false"), Signer::rsa()).await;
    refused(&h, &reply, before, 403, "não confirmou").await;
    // An address nobody invited (the invitation is another address's).
    let stranger = Person::new("sub-stranger", "estranho@gama.com.br");
    let reply = answered(&h, &provider, &stranger, |_| {}, Signer::rsa()).await;
    refused(&h, &reply, before, 403, "Peça a um proprietário").await;
    // The invitation, claimed once.
    let dona = Person::new("sub-dona", "Dona@Gama.com.br");
    let reply = answered(&h, &provider, &dona, |_| {}, Signer::rsa()).await;
    assert_eq!(reply.status, StatusCode::FOUND, "{}", text(&reply));
    let user =
        kobana_finance_mcp::storage::people::bound(&h.state.db, &provider.issuer, "sub-dona").await.unwrap().unwrap();
    assert_eq!(count(&h, "SELECT COUNT(*) FROM memberships WHERE user_id = $1 AND role = 'owner'", &user).await, 1);
    // Signing in again: the same person, by the subject alone (her address changed).
    let renamed = Person::new("sub-dona", "dona.nova@gama.com.br");
    let before = written(&h).await;
    let reply = answered(&h, &provider, &renamed, |_| {}, Signer::rsa()).await;
    assert_eq!(reply.status, StatusCode::FOUND);
    assert_eq!(written(&h).await, before, "the subject counts, not the address");
    // Another account of the provider with the address of the used invitation.
    let second = Person::new("sub-impostor", "dona@gama.com.br");
    let reply = answered(&h, &provider, &second, |_| {}, Signer::rsa()).await;
    refused(&h, &reply, before, 403, "já foi usado").await;
    // A new invitation of that address: the account is bound to another subject.
    let owner = h.token_with(&user, Some("finance.access finance.access.write"), |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    });
    let invite =
        rest(Method::POST, "/v1/invitations", &owner, Some(json!({"email": "ops@gama.com.br", "role": "viewer"})))
            .header("x-workspace-id", &gama)
            .build();
    assert_eq!(h.send(invite).await.status, 201);
    kobana_finance_mcp::transport::deploy::workspace_create(&h.state.db, "Delta", "dona@gama.com.br").await.unwrap();
    let before = written(&h).await;
    let reply = answered(&h, &provider, &second, |_| {}, Signer::rsa()).await;
    refused(&h, &reply, before, 403, "outra pessoa").await;
    // An expired invitation.
    h.state.db.execute_script("UPDATE invitations SET expires_at = 1 WHERE email = 'ops@gama.com.br'").await.unwrap();
    let ops = Person::new("sub-ops", "ops@gama.com.br");
    let reply = answered(&h, &provider, &ops, |_| {}, Signer::rsa()).await;
    refused(&h, &reply, before, 403, "expirou").await;
    // The bound person claims the pending invitation of her address on her next sign-in.
    let reply = answered(&h, &provider, &dona, |_| {}, Signer::rsa()).await;
    assert_eq!(reply.status, StatusCode::FOUND);
    assert_eq!(count(&h, "SELECT COUNT(*) FROM memberships WHERE user_id = $1", &user).await, 2, "Gama and Delta");
}
