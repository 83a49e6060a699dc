// Sign in (development): paste a token; it is kept in this tab and the user goes to their page.
import { claims, header, setToken, t } from "./session.js";

header();
const form = document.getElementById("signin");
const field = document.getElementById("token");
const error = document.getElementById("signin-error");

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const value = field.value.trim();
  if (value.split(".").length !== 3) {
    error.textContent = t("signin_bad_token");
    field.setAttribute("aria-invalid", "true");
    field.focus();
    return;
  }
  setToken(value);
  const roles = claims()?.roles || [];
  window.location.assign(roles.includes("approver") ? "/approver" : "/customer");
});
field.focus();
