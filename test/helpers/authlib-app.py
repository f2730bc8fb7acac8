"""A Flask app that signs people in with the school through Authlib (Debian's python3-authlib and
python3-flask), written as Authlib's documentation shows: the provider registered from its
discovery document, PKCE (S256), the ID token validated against the JWKS (signature, iss, aud, exp,
nonce) by authorize_access_token, then userinfo and a refresh. test/apps/authlib.integration.test.ts
starts it with ISSUER, CLIENT_ID, CLIENT_SECRET and PORT, and drives a person's browser through it.
"""

import os

from authlib.integrations.flask_client import OAuth
from flask import Flask, jsonify, url_for

app = Flask(__name__)
app.secret_key = os.urandom(24)

oauth = OAuth(app)
oauth.register(
    "campus",
    client_id=os.environ["CLIENT_ID"],
    client_secret=os.environ["CLIENT_SECRET"],
    server_metadata_url=os.environ["ISSUER"] + "/.well-known/openid-configuration",
    client_kwargs={"scope": "openid profile email", "code_challenge_method": "S256"},
)


@app.route("/login")
def login():
    return oauth.campus.authorize_redirect(url_for("callback", _external=True))


@app.route("/callback")
def callback():
    # Exchanges the code with the PKCE verifier and validates the ID token against the JWKS.
    token = oauth.campus.authorize_access_token()
    userinfo = oauth.campus.userinfo(token=token)
    refreshed = oauth.campus.fetch_access_token(grant_type="refresh_token", refresh_token=token["refresh_token"])
    return jsonify(
        id_token_claims=dict(token["userinfo"]),
        userinfo=dict(userinfo),
        scope=token.get("scope"),
        refreshed=refreshed["access_token"] != token["access_token"] and refreshed["refresh_token"] != token["refresh_token"],
    )


@app.route("/ready")
def ready():
    return "ok"


if __name__ == "__main__":
    app.run(host="127.0.0.1", port=int(os.environ["PORT"]))
