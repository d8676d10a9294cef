//! The bank list, on both backends and both doors:
//!
//! * `GET /v1/banks` (scope `finance.banks`) lists the Central Bank's STR participants
//!   that have a COMPE code, as the migration loaded them, with the real document's
//!   filters, sorts and pages; a bank's id is the name-based UUID of its ISPB; the tool
//!   `finance_banks_list` answers the same;
//! * accounts name their bank by `bank_id` or `bank_code` (checked against the list,
//!   422 naming the field), answer `bank_id` and `bank {code, name}`, filter on
//!   `bank_id`; the demo accounts name theirs; a payee's `bank_code` / `bank_ispb` is
//!   checked against the list;
//! * `banks import` of a file in the Bank's own layout (UTF-8 and Windows-1252), through
//!   the command, the Lambda invocation and the function both call: added, renamed and
//!   dropped, a dropped bank kept for the accounts that name it; a bad file refused with
//!   its line, nothing changed.

use crate::common;

use base64::Engine;
use common::*;
use http::Method;
use kobana_finance_mcp::transport::lambda::{self, Answer};
use lambda_http::{Context, LambdaEvent};
use serde_json::{json, value::RawValue, Value};

const SANTANDER: &str = "90400888";

async fn get(h: &Harness, token: &str, path: &str) -> Reply {
    h.send(rest(Method::GET, path, token, None).build()).await
}

/// Every page of `path` (a list), followed by its cursors.
async fn every_page(h: &Harness, token: &str, path: &str) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let separator = if path.contains('?') { '&' } else { '?' };
        let page_path = match &cursor {
            Some(c) => format!("{path}{separator}limit=100&cursor={c}"),
            None => format!("{path}{separator}limit=100"),
        };
        let reply = get(h, token, &page_path).await;
        assert_eq!(reply.status, 200, "{}", text(&reply));
        let page = reply.json();
        rows.extend(page["data"].as_array().unwrap().iter().cloned());
        match page["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => return rows,
        }
    }
}

#[tokio::test]
async fn the_bank_list_is_the_central_banks_with_a_compe_code_at_stable_ids() {
    let h = Harness::new().await;
    let token = h.api_token(DEMO_OWNER);
    let all = every_page(&h, &token, "/v1/banks").await;
    assert_eq!(all.len(), 438, "the 448 STR participants less the 10 without a COMPE code");
    let names: Vec<&str> = all.iter().map(|b| b["name"].as_str().unwrap()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "sorted by name by default");
    let bb = all.iter().find(|b| b["code"] == "001").unwrap();
    assert_eq!(
        bb,
        &json!({"id": BANCO_DO_BRASIL, "code": "001", "name": "Banco do Brasil S.A.", "ispb": "00000000",
                "short_name": "BCO DO BRASIL S.A."})
    );

    let reply = get(&h, &token, "/v1/banks?code=341").await.json();
    assert_eq!(
        reply["data"],
        json!([{"id": ITAU, "code": "341", "name": "ITAÚ UNIBANCO S.A.", "ispb": "60701190",
        "short_name": "ITAÚ UNIBANCO S.A."}])
    );
    let codes = |reply: Value| -> Vec<String> {
        reply["data"].as_array().unwrap().iter().map(|b| b["code"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(codes(get(&h, &token, "/v1/banks?code[in]=341,001,237&sort=code").await.json()), ["001", "237", "341"]);
    assert_eq!(codes(get(&h, &token, "/v1/banks?code[in]=341,001,237&sort=-code").await.json()), ["341", "237", "001"]);
    assert_eq!(codes(get(&h, &token, "/v1/banks?name=Banco%20do%20Brasil%20S.A.").await.json()), ["001"]);
    assert_eq!(
        codes(get(&h, &token, "/v1/banks?name[in]=Banco%20Inter%20S.A.,Banco%20Bradesco%20S.A.").await.json()).len(),
        2
    );
    let by_code = every_page(&h, &token, "/v1/banks?sort=code").await;
    assert_eq!(by_code.len(), 438, "pages by code cover the list too");
    let reply = get(&h, &token, "/v1/banks?colour=blue").await;
    assert_eq!((reply.status.as_u16(), reply.json()["error"]["code"].clone()), (400, json!("bad_request")));

    // Its own scope: a token without it is refused, whatever its other scopes.
    let narrow = h.token_with(DEMO_VIEWER, Some("finance.accounts"), |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    });
    let reply = get(&h, &narrow, "/v1/banks").await;
    assert_eq!(reply.status, 403, "{}", text(&reply));
    assert_eq!(reply.json()["error"]["details"]["required"], "finance.banks");
    let viewer = h.token_with(DEMO_VIEWER, Some("finance.banks"), |c| {
        c.aud = kobana_finance_mcp::auth::jwt::Audience::One(format!("{PUBLIC_URL}/v1"))
    });
    assert_eq!(
        get(&h, &viewer, "/v1/banks?code=001").await.json()["data"][0]["id"],
        BANCO_DO_BRASIL,
        "every role reads it"
    );

    // The tool answers what the route does.
    let tool = h
        .send(
            call("finance_banks_list", json!({"filters": {"code": {"in": ["341", "001"]}}, "sort": "code"}))
                .bearer(&h.token(DEMO_OWNER))
                .build(),
        )
        .await;
    let answer: Value = serde_json::from_str(tool.result()["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(answer, get(&h, &token, "/v1/banks?code[in]=341,001&sort=code").await.json());
}

#[tokio::test]
async fn accounts_name_a_bank_of_the_list_by_id_or_code() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    // The demo accounts name their banks.
    let checking = get(&h, &token, &format!("/v1/financial-accounts/{ACME_CHECKING_ACCOUNT}")).await.json();
    assert_eq!(
        (checking["bank_id"].clone(), checking["bank"].clone()),
        (json!(ITAU), json!({"code": "341", "name": "ITAÚ UNIBANCO S.A."}))
    );
    let cash = get(&h, &token, &format!("/v1/financial-accounts/{ACME_CASH_ACCOUNT}")).await.json();
    assert_eq!((cash["bank_id"].clone(), cash["bank"].clone()), (Value::Null, Value::Null));

    let create = |body: Value| rest(Method::POST, "/v1/financial-accounts", &token, Some(body)).build();
    let base = json!({"company_id": ACME_COMPANY, "name": "Conta BB", "type": "checking"});
    let with = |extra: Value| {
        let mut body = base.clone();
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        body
    };
    let by_id = h.send(create(with(json!({"bank_id": BANCO_DO_BRASIL})))).await;
    assert_eq!(by_id.status, 201, "{}", text(&by_id));
    assert_eq!(by_id.json()["bank"], json!({"code": "001", "name": "Banco do Brasil S.A."}));
    let by_code = h.send(create(with(json!({"bank_code": "001", "name": "Outra BB"})))).await;
    assert_eq!(by_code.status, 201, "{}", text(&by_code));
    assert_eq!(by_code.json()["bank_id"], BANCO_DO_BRASIL);
    let rows_before =
        count(&h, "SELECT COUNT(*) FROM financial_accounts WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await;
    for (body, status, field, reason) in [
        (json!({"bank_id": BANCO_DO_BRASIL, "bank_code": "001"}), 400, "bank_code", "mutually_exclusive"),
        (json!({"bank_code": "999"}), 422, "bank_code", "invalid_reference"),
        (json!({"bank_id": MISSING}), 422, "bank_id", "invalid_reference"),
        (json!({"bank_id": "itau"}), 422, "bank_id", "invalid_uuid"),
    ] {
        let reply = h.send(create(with(body.clone()))).await;
        assert_eq!(reply.status, status, "{body}: {}", text(&reply));
        assert_eq!(details(&reply), pair(field, reason), "{body}");
    }
    let rows_after =
        count(&h, "SELECT COUNT(*) FROM financial_accounts WHERE workspace_id = $1", DEMO_WORKSPACE_ACME).await;
    assert_eq!(rows_after, rows_before, "nothing written");

    // The list: rows carry the bank; bank_id filters.
    let listed = get(&h, &token, &format!("/v1/financial-accounts?bank_id={BANCO_DO_BRASIL}")).await.json();
    let names: Vec<&str> = listed["data"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["Conta BB", "Outra BB"]);
    assert!(listed["data"].as_array().unwrap().iter().all(|a| a["bank"]["code"] == "001"));
    let itau = get(&h, &token, &format!("/v1/financial-accounts?bank_id[in]={ITAU}")).await.json();
    assert_eq!(itau["data"][0]["id"], ACME_CHECKING_ACCOUNT);

    // An update moves it to another bank by code, or clears it.
    let path = format!("/v1/financial-accounts/{}", by_id.json()["id"].as_str().unwrap());
    let moved = h.send(rest(Method::PATCH, &path, &token, Some(json!({"bank_code": "341"}))).build()).await;
    assert_eq!(moved.json()["bank_id"], ITAU, "{}", text(&moved));
    let refused = h.send(rest(Method::PATCH, &path, &token, Some(json!({"bank_code": "998"}))).build()).await;
    assert_eq!(details(&refused), pair("bank_code", "invalid_reference"));
    let cleared = h.send(rest(Method::PATCH, &path, &token, Some(json!({"bank_id": null}))).build()).await;
    assert_eq!((cleared.json()["bank_id"].clone(), cleared.json()["bank"].clone()), (Value::Null, Value::Null));

    // A payee's bank is one of the list too.
    let payable = |coordinates: Value| {
        let mut body = json!({"company_id": ACME_COMPANY, "description": "Frete", "amount": "10.00",
                              "due_date": "2026-12-20", "person_id": ACME_LANDLORD, "payment_method_kind": "ted"});
        body.as_object_mut().unwrap().extend(coordinates.as_object().unwrap().clone());
        rest(Method::POST, "/v1/payables", &token, Some(body)).build()
    };
    for (coordinates, field) in
        [(json!({"bank_code": "999"}), "bank_code"), (json!({"bank_ispb": "99999999"}), "bank_ispb")]
    {
        let reply = h.send(payable(coordinates.clone())).await;
        assert_eq!(reply.status, 422, "{coordinates}: {}", text(&reply));
        assert_eq!(details(&reply), pair(field, "invalid_reference"), "{coordinates}");
    }
    let paid = h.send(payable(json!({"bank_code": "237", "bank_ispb": "60746948"}))).await;
    assert_eq!(paid.status, 201, "{}", text(&paid));
}

/// A `ParticipantesSTR.csv` in the Bank's layout: Banco do Brasil as it is, Itaú
/// renamed, Santander gone (left out), a new participant, and one without a code.
const BANK_FILE: &str =
    "ISPB,Nome_Reduzido,Número_Código,Participa_da_Compe,Acesso_Principal,Nome_Extenso,Início_da_Operação\n\
00000000,BCO DO BRASIL S.A.,001,Sim,RSFN,Banco do Brasil S.A.,22/04/2002\n\
00038166,Bacen,n/a,Não,RSFN,Banco Central do Brasil,22/04/2002\n\
60701190,ITAÚ UNIBANCO S.A.,341,Sim,RSFN,\"ITAÚ UNIBANCO S.A., EM SÃO PAULO\",22/04/2002\n\
99999999,BCO NOVO S.A.,999,Sim,RSFN,Banco Novo S.A.,01/12/2026\n";

/// The same bytes as the Bank published them for years: Windows-1252.
fn windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| match c {
            'ú' => 0xFA,
            'Ú' => 0xDA,
            'ã' => 0xE3,
            'Ã' => 0xC3,
            'í' => 0xED,
            'Í' => 0xCD,
            c => u8::try_from(c).expect("Latin-1"),
        })
        .collect()
}

async fn invoke(h: &Harness, event: Value) -> Result<Value, String> {
    let payload = RawValue::from_string(event.to_string()).unwrap();
    let answer = lambda::invoke(h.state.clone(), h.app.clone(), LambdaEvent { payload, context: Context::default() })
        .await
        .map_err(|d| format!("{}: {}", d.error_type, d.error_message))?;
    match answer {
        Answer::Deploy(v) => Ok(v),
        Answer::Http(_) => Err("an HTTP answer".into()),
    }
}

async fn list_snapshot(h: &Harness) -> Vec<(String, Option<String>, String, i64)> {
    sql::query("SELECT ispb, code, name, listed FROM banks ORDER BY ispb")
        .fetch_all(&h.state.db)
        .await
        .unwrap()
        .iter()
        .map(|r| (r.try_get(0).unwrap(), r.try_get(1).unwrap(), r.try_get(2).unwrap(), r.try_get(3).unwrap()))
        .collect()
}

#[tokio::test]
async fn banks_import_adds_renames_and_keeps_what_left_for_the_accounts_that_name_it() {
    let h = Harness::with_demo().await;
    let token = h.api_token(DEMO_OWNER);
    // An account of Acme's at Santander, by its COMPE code.
    let santander_account = |name: &str| {
        let body = json!({"company_id": ACME_COMPANY, "name": name, "type": "checking", "bank_code": "033"});
        rest(Method::POST, "/v1/financial-accounts", &token, Some(body)).build()
    };
    let santander = h.send(santander_account("Conta Santander")).await;
    assert_eq!(santander.status, 201, "{}", text(&santander));
    let santander = santander.json();

    // Bad files first: each refused with its line, through the Lambda invocation; nothing changes.
    let before = list_snapshot(&h).await;
    let head = BANK_FILE.lines().next().unwrap();
    for (file, says) in [
        (format!("{head}\n00000000,BCO DO BRASIL S.A.,1A,Sim,RSFN,Banco do Brasil S.A.,22/04/2002\n"), "line 2:"),
        (format!("{BANK_FILE}60701190,DUPLICADO,998,Sim,RSFN,Duplicado,01/01/2026\n"), "line 6:"),
        (format!("{BANK_FILE}12345678,CURTA,997\n"), "line 6:"),
        ("nome;codigo\nBanco;001\n".to_string(), "line 1:"),
        (head.to_string(), "no participant"),
    ] {
        let event =
            json!({"kfin": "banks-import", "file_base64": base64::engine::general_purpose::STANDARD.encode(&file)});
        let error = invoke(&h, event).await.unwrap_err();
        assert!(error.starts_with("BanksImportFailed") && error.contains(says), "{file:?}: {error}");
    }
    assert_eq!(list_snapshot(&h).await, before, "a refused file changes nothing");

    // The command line, on a Windows-1252 file.
    let dir = std::env::temp_dir().join(format!("kfin-banks-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ParticipantesSTR.csv");
    std::fs::write(&path, windows_1252(BANK_FILE)).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_kobana-finance-mcp"))
        .args(["banks", "import"])
        .arg(&path)
        .args(["--database-url", &h.db.url])
        .env("KFIN_JWT_SECRET", SECRET)
        .env("KFIN_LOG", "off")
        .output()
        .expect("run the binary");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let answer: Value = serde_json::from_slice(&output.stdout).expect("the answer is JSON");
    assert_eq!(answer["kfin"], "banks-import");
    assert_eq!(answer["listed"], 4);
    assert_eq!(
        answer["added"],
        json!([{"id": bank_id("99999999"), "ispb": "99999999", "code": "999", "name": "Banco Novo S.A."}])
    );
    assert_eq!(
        answer["renamed"],
        json!([{"id": ITAU, "ispb": "60701190", "code": "341", "name": "ITAÚ UNIBANCO S.A., EM SÃO PAULO",
                "previous_code": "341", "previous_name": "ITAÚ UNIBANCO S.A."}])
    );
    assert_eq!(answer["unchanged"], 2);
    let dropped = answer["dropped"].as_array().unwrap();
    assert_eq!(dropped.len(), 448 - 3);
    assert!(dropped.iter().any(|b| b["ispb"] == SANTANDER && b["code"] == "033"));

    // What the list offers now; the account of a bank that left keeps it.
    let codes: Vec<Value> =
        every_page(&h, &token, "/v1/banks?sort=code").await.iter().map(|b| b["code"].clone()).collect();
    assert_eq!(codes, [json!("001"), json!("341"), json!("999")]);
    let account_path = format!("/v1/financial-accounts/{}", santander["id"].as_str().unwrap());
    let kept = get(&h, &token, &account_path).await.json();
    assert_eq!(kept["bank"], json!({"code": "033", "name": "BANCO SANTANDER (BRASIL) S.A."}));
    let same = h
        .send(
            rest(
                Method::PATCH,
                &account_path,
                &token,
                Some(json!({"bank_id": kept["bank_id"], "name": "Santander PJ"})),
            )
            .build(),
        )
        .await;
    assert_eq!(same.status, 200, "an account keeps a bank that left: {}", text(&same));
    let reply = h.send(santander_account("Nova Santander")).await;
    assert_eq!(details(&reply), pair("bank_code", "invalid_reference"), "a bank that left is not offered");

    // The same file again, as UTF-8 through the Lambda invocation: nothing more to do.
    let event =
        json!({"kfin": "banks-import", "file_base64": base64::engine::general_purpose::STANDARD.encode(BANK_FILE)});
    let again = invoke(&h, event).await.expect("imported");
    assert_eq!(
        (again["added"].clone(), again["renamed"].clone(), again["dropped"].clone(), again["unchanged"].clone()),
        (json!([]), json!([]), json!([]), json!(4))
    );

    // The shipped list brings the others back (under the ids they always had).
    let shipped = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/data/banks/banks.csv")).unwrap();
    let back = kobana_finance_mcp::transport::deploy::banks_import(&h.state.db, &shipped).await.unwrap();
    assert_eq!(back["added"].as_array().unwrap().len(), 448 - 3);
    assert_eq!(
        back["dropped"],
        json!([{"id": bank_id("99999999"), "ispb": "99999999", "code": "999", "name": "Banco Novo S.A."}])
    );
    assert_eq!(every_page(&h, &token, "/v1/banks").await.len(), 438);
    assert_eq!(get(&h, &token, &account_path).await.json()["bank_id"], santander["bank_id"]);
}

fn bank_id(ispb: &str) -> String {
    kobana_finance_mcp::domain::banks::bank_id(ispb)
}
