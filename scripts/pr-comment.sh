#!/usr/bin/env bash
# Posts copperhead's review of a pull request as one comment, or updates the comment it posted
# before: the design diff against the pull request's base, the check result, and a link to the
# renders. The comment is found again by the marker on its first line and by its author (the
# token's own user), so each push edits it instead of adding another, and a comment someone
# else started with the marker is never taken for it.
#
# Needs curl and jq (both on every GitHub-hosted runner). Everything comes from the environment:
#   GITHUB_API_URL, GITHUB_REPOSITORY, GITHUB_TOKEN   where to post, and as whom
#   PR_NUMBER                                         the pull request
#   DIFF_MARKDOWN   file with `copperhead diff --format markdown`
#   CHECK_JSON      file with `copperhead check --json` (optional)
#   RENDERS_URL     link to the uploaded renders (optional)
#
# GitHub refuses comments over 65536 characters; a longer diff is cut at a line, and the comment
# says where the whole one is (the artifact holds it as diff.md).
set -euo pipefail

# Comment bodies are cut at this many bytes (which is never more characters).
MAX_BODY=60000

marker='<!-- copperhead:pull-request-comment -->'
api="${GITHUB_API_URL:?GITHUB_API_URL is not set}"
repo="${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
pr="${PR_NUMBER:?PR_NUMBER is not set}"
token="${GITHUB_TOKEN:?GITHUB_TOKEN is not set: pass the github-token input}"

for tool in curl jq; do
  command -v "$tool" >/dev/null || { echo "::error::the comment step needs $tool on the runner"; exit 1; }
done

body=$(mktemp)
{
  echo "$marker"
  echo "## copperhead"
  echo
  if [ -n "${CHECK_JSON:-}" ] && [ -s "$CHECK_JSON" ]; then
    jq -r '
      def n(k): .counts[k];
      "**Check:** " + (if .ok then "passed" else "failed" end)
      + " — \(n("error")) error(s), \(n("warning")) warning(s)"
      + (if .baseline then " · against the base: \(.baseline.counts.new) new, \(.baseline.counts.unchanged) unchanged, \(.baseline.counts.absent) fixed" else "" end)
      + "\n\n"
      + ([.checks[] | "`\(.id)` \(.status)"] | join(" · "))
    ' "$CHECK_JSON"
    echo
  fi
  diff="${DIFF_MARKDOWN:?DIFF_MARKDOWN is not set}"
  room=$((MAX_BODY - 2000))
  # copperhead renders no HTML from the design; an HTML comment opened anyway (a stand-in
  # diff.md, a future format) must still not hide the rest of the comment or fake the marker.
  if [ "$(wc -c < "$diff")" -le "$room" ]; then
    sed 's/<!--/\&lt;!--/g' "$diff"
  else
    LC_ALL=C awk -v max="$room" '{ n += length($0) + 1; if (n > max) exit; gsub(/<!--/, "\\&lt;!--"); print }' "$diff"
    echo
    echo "*The diff is longer than a comment may be: the rest is in \`diff.md\` of the renders artifact, and in the job log.*"
  fi
  if [ -n "${RENDERS_URL:-}" ]; then
    echo
    echo "The whole diff, before/after plots and a what-changed image of every changed sheet (and of the board, when it changed), each what-changed SVG with a PNG beside it that any viewer opens: [copperhead renders]($RENDERS_URL)."
  fi
} > "$body"

call() { # METHOD URL [JSON BODY FILE]
  local args=(--silent --show-error --fail-with-body --location
    -H "Accept: application/vnd.github+json" -H "Authorization: Bearer $token" -H "X-GitHub-Api-Version: 2022-11-28")
  if [ $# -ge 3 ]; then args+=(-H "Content-Type: application/json" --data-binary "@$3"); fi
  curl "${args[@]}" -X "$1" "$2"
}

# Whose comments are ours. GET /user names a personal access token's user; the Actions
# GITHUB_TOKEN (an installation token) may not call it (403), and its comments are posted as
# github-actions[bot]. Anyone can write the marker, so a comment counts only when it is ours.
author=$(call GET "$api/user" 2>/dev/null | jq -r '.login // empty' || true)
author=${author:-github-actions[bot]}

# The comment posted earlier, if any: the first of ours whose body starts with the marker.
existing=""
page=1
while :; do
  comments=$(call GET "$api/repos/$repo/issues/$pr/comments?per_page=100&page=$page")
  existing=$(jq -r --arg m "$marker" --arg a "$author" '[.[] | select((.body | startswith($m)) and .user.login == $a)][0].id // empty' <<<"$comments")
  [ -n "$existing" ] && break
  [ "$(jq length <<<"$comments")" -lt 100 ] && break
  page=$((page + 1))
done

payload=$(mktemp)
jq -Rs '{body: .}' < "$body" > "$payload"
# Say what happened only once the API said it happened.
rc=0
if [ -n "$existing" ]; then
  response=$(call PATCH "$api/repos/$repo/issues/comments/$existing" "$payload") || rc=$?
  done="updated comment" failed="could not update comment $existing"
else
  response=$(call POST "$api/repos/$repo/issues/$pr/comments" "$payload") || rc=$?
  done="posted comment" failed="could not post the comment"
fi
rm -f "$body" "$payload"
if [ "$rc" -ne 0 ]; then
  echo "$failed: $(jq -r '.message // empty' <<<"$response" 2>/dev/null || true) (curl exit $rc)" >&2
  exit 1
fi
echo "$done $(jq -r '.html_url // .id' <<<"$response")"
